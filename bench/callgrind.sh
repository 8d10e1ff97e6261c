#!/usr/bin/env bash
# bench/callgrind.sh: instructions per event, per component, of source trees
# given as git refs (issue 23 item 4).  Instruction counts are repeatable
# where wall clock on a shared machine is not, so a regression shows as a
# number.
#
#   ./bench/callgrind.sh main layers          compare two trees (the first
#                                             is the base of the ratios)
#   ./bench/callgrind.sh main v0.2.0 8f0744b0909e68aa064cf014a237424f615678ad
#
# Options: --batches N (10,000-event batches per ingest_batch workload,
# default 5), --rows N (events of the per-row workloads, default 10000),
# --workloads a,b (default batch_fixed,batch_fss,row_fixed,count_fixed),
# --name NAME (result files bench/results/callgrind-NAME.{json,md}; default
# <date>-<ref>-<ref>...), --latest NAME (the copy of the results,
# default callgrind-latest), --keep (keep the scratch directory).  A ref may
# be "WORKTREE" for the checkout as it is on disk (uncommitted changes too).
#
# For every ref: git archive of the commit into a scratch directory, make,
# and make install into a private copy of the PostgreSQL 15 tree (as
# scripts/lib.sh sf_private_tree does; nobody's install into the system tree
# is used), a throwaway cluster of that tree loaded with the seeded workload
# of bench/gen_workload.py and bench/sql/bench.sql (the delivery arrays
# pre-built, so building them is not measured), then for every workload a
# copy of that cluster and ONE single-user backend (postgres --single, as
# user postgres when run as root) under
#   valgrind --tool=callgrind --collect-atstart=no
#            --toggle-collect=<entry> --toggle-collect=sf_xact_callback
#            --toggle-collect=sf_precommit_callback
#            --zero-before=pg_backend_pid
# which runs: create the pipeline, warm-up calls on another pipeline
# (the first call's plan preparation and cache set-up), SELECT
# pg_backend_pid() (zeroes the counters), then the measured workload.  Only
# the entry function (sf_ingest_batch / sf_ingest / sf_ingest_count, the
# same exported symbol on every version) and the transaction callbacks
# (which store the buffered journal at commit since 0.2.0: sf_xact_callback,
# and since 0.4.0 the pre-commit driver sf_precommit_callback, which also
# runs the sequencers of parallel pipelines; a revision without it just
# never enters it) are counted.
# bench/callgrind_report.py turns the files into instructions per event per
# component; see docs/performance.md, "Instruction counts".
#
# Workloads (4 partitions, 10,000 keys, the benchmark's seed):
#   batch_fixed   ingest_batch of N batches of 10,000 deliveries, window
#                 fixed(10000), the tick's advances and a COMMIT after each
#                 batch, as bench/run.sh's sf_batch driver;
#   batch_fss     the same, fixed + sliding(10000, 2000) + session(10000);
#   row_fixed     one SELECT ... CROSS JOIN LATERAL streamforge.ingest(...)
#                 over the first --rows deliveries, fixed window;
#   count_fixed   streamforge.ingest_count in a PL/pgSQL loop over the same
#                 deliveries (trees without ingest_count: blank);
#   stmt_batch_fixed, stmt_floor
#                 the whole SQL statement, not only the C function: the
#                 PL/pgSQL loop of batch_fixed without its advances (SELECT
#                 count(*) INTO c FROM streamforge.ingest_batch('cg', arr),
#                 a COMMIT after each tick's batch), and the same loop over
#                 bench/targets.sh's floor (SELECT count(*), sum(d.value)
#                 FROM unnest(arr) d).  Counted inside
#                 SPI_execute_plan_with_paramlist (every statement of the
#                 loop body; streamforge's own SPI calls use SPI_execute_plan)
#                 and sf_xact_callback: the instructions behind the time
#                 ratio of targets.sh's "time over only unnesting" target.
#                 Not in the default list.
#   batch_measures the batches of batch_fixed as measures deliveries (two
#                 measures, count, sum and avg), ingest_measures_batch.
#
# --replay (issue 39 item 1): what a cold load's journal replay costs
# against the calls that wrote the journal.  Each workload (default
# batch_fixed,batch_fss,row_fixed,batch_measures) runs with its entry
# function, sf_advance, sf_mark_idle and sf_xact_callback counted (every
# write call whose entry is replayed), then a second single-user backend on
# the resulting cluster loads the pipeline (SELECT watermark, after a
# warm-up read of another pipeline) with sf_persist_open counted: fetching
# the rows, decoding and replaying every entry.  Writes
# bench/results/callgrind-replay-NAME.md: instructions per event of both,
# and their ratio.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
BENCH=$SF_ROOT/bench
PORT=5433						# names the socket file only: no TCP listener
DB=bench

BATCHES=5
ROWS=10000
WORKLOADS=batch_fixed,batch_fss,row_fixed,count_fixed
NAME=
LATEST=callgrind-latest
KEEP=
REPLAY=
REFS=()
usage() { echo "usage: $0 [--batches N] [--rows N] [--workloads a,b] [--name NAME] [--latest NAME] [--keep] REF..." >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
		--batches) BATCHES=$2; shift ;;
		--rows) ROWS=$2; shift ;;
		--workloads) WORKLOADS=$2; shift ;;
		--name) NAME=$2; shift ;;
		--latest) LATEST=$2; shift ;;
		--keep) KEEP=1 ;;
		--replay) REPLAY=1 ;;
		-h | --help) sed -n '2,60p' "$0"; exit 0 ;;
		-*) usage ;;
		*) REFS+=("$1") ;;
	esac
	shift
done
[ ${#REFS[@]} -ge 1 ] || usage

SEED=20260101
TICK=10000
LATENESS=1000
DISORDER=2000
BS=10000
ARRIVALS=$((BATCHES * BS > ROWS ? BATCHES * BS : ROWS))

sf_need_packages "${SF_BUILD_PACKAGES[@]}" python3 valgrind
sf_check_server_user
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
GIT=(git -c safe.directory="$SF_ROOT" -C "$SF_ROOT")

SCRATCH=$(mktemp -d /tmp/streamforge-callgrind.XXXXXX)
chmod 755 "$SCRATCH"
started=
cleanup() {
	local rc=$?
	if [ -n "$started" ]; then
		SF_RUN_DIR=$SCRATCH sf_as_server "$started/pg_ctl" -D "$SCRATCH/data" -m fast -w stop >/dev/null 2>&1 || true
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
T_START=$SECONDS
elapsed() { echo $((SECONDS - T_START))s; }

# ------------------------------------------------------------------
# Sources: one directory per ref
# ------------------------------------------------------------------
LABELS=()
SHAS=()
for i in "${!REFS[@]}"; do
	ref=${REFS[$i]}
	src=$SCRATCH/t$i/src
	mkdir -p "$src"
	if [ "$ref" = WORKTREE ]; then
		sha="$("${GIT[@]}" rev-parse HEAD)+worktree"
		# every file git knows or would add (tracked, and untracked but not
		# ignored), as they are on disk
		"${GIT[@]}" ls-files -z -c -o --exclude-standard |
			(cd "$SF_ROOT" && tar --null -T - -cf -) | tar -C "$src" -xf - ||
			sf_die "copying the checkout failed"
	else
		sha=$("${GIT[@]}" rev-parse --verify -q "$ref^{commit}") ||
			sf_die "not a commit here: $ref"
		"${GIT[@]}" archive "$sha" | tar -C "$src" -xf - ||
			sf_die "git archive $ref failed"
	fi
	label=$ref
	[ ${#label} -ge 40 ] && label=${label:0:8}
	label=${label//:/_}
	# the same ref twice (a repeatability check): main, main#2
	n=1
	while printf '%s\n' "${LABELS[@]}" | grep -qxF "$label"; do
		n=$((n + 1))
		label=${ref//:/_}#$n
	done
	LABELS+=("$label")
	SHAS+=("$sha")
	sf_say "building $label ($sha) ($(elapsed))"
	make -C "$src" -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" \
		>"$SCRATCH/t$i/build.log" 2>&1 ||
		{ tail -n 20 "$SCRATCH/t$i/build.log"; sf_die "building $ref failed"; }
	(sf_private_tree "$SCRATCH/t$i/pg" "$src")
	# the library: streamforge-<version>.so since 0.4.0 (bound per version)
	lib=$src/streamforge.so
	for l in "$src"/streamforge-*.so; do
		[ -e "$l" ] && lib=$l
	done
	nm -D --defined-only "$lib" | awk '{print $3}' >"$SCRATCH/t$i/exports.txt"
	grep -qx sf_ingest_batch "$SCRATCH/t$i/exports.txt" ||
		sf_die "$ref: $(basename "$lib") exports no sf_ingest_batch"
done

# ------------------------------------------------------------------
# The workload (the same files for every tree)
# ------------------------------------------------------------------
cp -r "$BENCH/sql" "$BENCH/gen_workload.py" "$SCRATCH/"
mkdir -p "$SCRATCH/work" "$SCRATCH/cg"
sf_is_root && chown -R postgres:postgres "$SCRATCH"
sf_say "generating the workload: $ARRIVALS arrivals, seed $SEED"
as_server "$PY" "$SCRATCH/gen_workload.py" --out "$SCRATCH/work" \
	--arrivals "$ARRIVALS" --seed "$SEED" --tick "$TICK" \
	--disorder "$DISORDER" --lateness "$LATENESS" 2>"$SCRATCH/work/counts.txt"

# The measured scripts, for postgres --single -j (a statement ends with a
# semicolon and an empty line).  $1 workload; prints the script.
warmup_batch="SELECT count(*) FROM streamforge.ingest_batch('warm', ARRAY[row('p0', 0, 'warm-1', 'w', 0, 1)::streamforge.delivery]);"
warmup_row="SELECT count(*) FROM streamforge.ingest('warm', 'p0', 1, 'warm-2', 'w', 1, 1);"
script() {
	local w=$1 shape=fixed
	[ "$w" = batch_fss ] && shape=fixed_sliding_session
	cat <<EOF
SELECT bench.fresh_pipeline('warm', 'fixed');

$(if [ "$w" = batch_measures ]; then
	echo "SELECT streamforge.create_pipeline('cg', ARRAY(SELECT DISTINCT partition FROM bench.staging WHERE arrival < 100000 ORDER BY 1), bench.windows('fixed'), bench.param('lateness'), measures => ARRAY['v', 'w'], aggregates => ARRAY['count', 'sum(v)', 'avg(w)']);"
else
	echo "SELECT bench.fresh_pipeline('cg', '$shape');"
fi)

$warmup_batch

$warmup_row

SELECT streamforge.watermark('cg');

EOF
	[ "$w" = count_fixed ] &&
		printf '%s\n\n' "SELECT streamforge.ingest_count('warm', 'p0', 2, 'warm-3', 'w', 2, 1);"
	printf '%s\n\n' "SELECT pg_backend_pid();"
	case "$w" in
		batch_fixed | batch_fss)
			cat <<EOF
DO \$\$
DECLARE
    r record;
    c bigint;
BEGIN
    FOR s IN 0 .. $BATCHES - 1 LOOP
        FOR r IN SELECT b.arr FROM bench.batches b
                  WHERE b.batch_size = $BS AND b.seg = s
                  ORDER BY b.batch_no LOOP
            SELECT count(*) INTO c FROM streamforge.ingest_batch('cg', r.arr);
        END LOOP;
        FOR r IN SELECT * FROM bench.control
                  WHERE after_arrival >= s * $TICK
                    AND after_arrival < (s + 1) * $TICK
                  ORDER BY seq LOOP
            IF r.op = 'advance' THEN
                SELECT count(*) INTO c
                  FROM streamforge.advance('cg', r.partition, r.progress);
            ELSE
                SELECT count(*) INTO c
                  FROM streamforge.mark_idle('cg', r.partition);
            END IF;
        END LOOP;
        COMMIT;
    END LOOP;
END
\$\$;

EOF
			;;
		stmt_batch_fixed | stmt_floor)
			local body="SELECT count(*) INTO c FROM streamforge.ingest_batch('cg', r.arr);"
			[ "$w" = stmt_floor ] &&
				body="SELECT count(*), sum(d.value) INTO c, sm FROM unnest(r.arr) d;"
			cat <<EOF
DO \$\$
DECLARE
    r record;
    c bigint;
    sm numeric;
BEGIN
    FOR s IN 0 .. $BATCHES - 1 LOOP
        FOR r IN SELECT b.arr FROM bench.batches b
                  WHERE b.batch_size = $BS AND b.seg = s
                  ORDER BY b.batch_no LOOP
            $body
        END LOOP;
        COMMIT;
    END LOOP;
END
\$\$;

EOF
			;;
		batch_measures)
			cat <<EOF
DO \$\$
DECLARE
    r record;
    c bigint;
BEGIN
    FOR s IN 0 .. $BATCHES - 1 LOOP
        FOR r IN SELECT ARRAY(SELECT ROW(d.partition, d.source_offset, d.event_id,
                                        d.key, d.event_time,
                                        ARRAY[d.value, d.value % 7])::streamforge.measures_delivery
                                FROM unnest(b.arr) AS d) AS arr
                   FROM bench.batches b
                  WHERE b.batch_size = $BS AND b.seg = s
                  ORDER BY b.batch_no LOOP
            SELECT count(*) INTO c FROM streamforge.ingest_measures_batch('cg', r.arr);
        END LOOP;
        FOR r IN SELECT * FROM bench.control
                  WHERE after_arrival >= s * $TICK
                    AND after_arrival < (s + 1) * $TICK
                  ORDER BY seq LOOP
            IF r.op = 'advance' THEN
                SELECT count(*) INTO c
                  FROM streamforge.advance('cg', r.partition, r.progress);
            ELSE
                SELECT count(*) INTO c
                  FROM streamforge.mark_idle('cg', r.partition);
            END IF;
        END LOOP;
        COMMIT;
    END LOOP;
END
\$\$;

EOF
			;;
		row_fixed)
			cat <<EOF
SELECT count(*)
  FROM (SELECT * FROM bench.staging WHERE arrival < $ROWS ORDER BY arrival) d
 CROSS JOIN LATERAL streamforge.ingest('cg', d.partition, d.source_offset,
        d.event_id, d.key, d.event_time, d.value) ch;

EOF
			;;
		count_fixed)
			cat <<EOF
DO \$\$
DECLARE
    d record;
    c int;
BEGIN
    FOR d IN SELECT * FROM bench.staging WHERE arrival < $ROWS
              ORDER BY arrival LOOP
        c := streamforge.ingest_count('cg', d.partition, d.source_offset,
                d.event_id, d.key, d.event_time, d.value);
    END LOOP;
END
\$\$;

EOF
			;;
		*) sf_die "unknown workload $w" ;;
	esac
}

entry_of() {
	case "$1" in
		stmt_*) echo SPI_execute_plan_with_paramlist ;;
		batch_measures) echo sf_ingest_measures_batch ;;
		batch_*) echo sf_ingest_batch ;;
		row_*) echo sf_ingest ;;
		count_*) echo sf_ingest_count ;;
	esac
}

RUNS=()
REPLAYS=()
[ -n "$REPLAY" ] && [ "$WORKLOADS" = batch_fixed,batch_fss,row_fixed,count_fixed ] &&
	WORKLOADS=batch_fixed,batch_fss,row_fixed,batch_measures
IFS=, read -r -a WLIST <<<"$WORKLOADS"
for w in "${WLIST[@]}"; do script "$w" >/dev/null; done	# unknown names fail here
for i in "${!REFS[@]}"; do
	label=${LABELS[$i]}
	srvbin=$SCRATCH/t$i/pg$PGBIN
	sf_say "$label: loading a throwaway cluster ($(elapsed))"
	rm -rf "$SCRATCH/data"
	as_server "$srvbin/initdb" -D "$SCRATCH/data" -U postgres -A trust \
		--locale=C --encoding=UTF8 >"$SCRATCH/t$i/initdb.log" 2>&1 ||
		{ cat "$SCRATCH/t$i/initdb.log"; sf_die "initdb failed"; }
	as_server tee -a "$SCRATCH/data/postgresql.conf" >/dev/null <<EOF

# streamforge callgrind benchmark: Unix socket only, in the scratch directory
listen_addresses = ''
port = $PORT
unix_socket_directories = '$SCRATCH'
unix_socket_permissions = 0700
fsync = off
autovacuum = off
jit = off
EOF
	as_server "$srvbin/pg_ctl" -D "$SCRATCH/data" -l "$SCRATCH/t$i/server.log" -w start >/dev/null ||
		{ tail -n 20 "$SCRATCH/t$i/server.log"; sf_die "could not start the cluster"; }
	started=$srvbin
	as_server "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" -U postgres -d postgres \
		-c "CREATE DATABASE $DB"
	as_server "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" -U postgres -d "$DB" \
		-c "CREATE EXTENSION streamforge" -f "$SCRATCH/sql/bench.sql" >/dev/null
	as_server "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" -U postgres -d "$DB" <<EOF >/dev/null
\copy bench.staging FROM '$SCRATCH/work/deliveries.csv' WITH (FORMAT csv)
\copy bench.control FROM '$SCRATCH/work/control.csv' WITH (FORMAT csv)
INSERT INTO bench.param VALUES
    ('arrivals', $ARRIVALS), ('seed', $SEED), ('tick', $TICK),
    ('lateness', $LATENESS), ('disorder', $DISORDER),
    ('fixed_size', 10000), ('slide_step', 2000), ('session_gap', 10000);
SELECT bench.build_batches($BS, $((BATCHES * BS)));
VACUUM ANALYZE;
CHECKPOINT;
EOF
	batch_events=$(as_server "$PGBIN/psql" -X -At -h "$SCRATCH" -p "$PORT" -U postgres -d "$DB" \
		-c "SELECT sum(n) FROM bench.batches WHERE batch_size = $BS AND seg < $BATCHES")
	row_events=$(as_server "$PGBIN/psql" -X -At -h "$SCRATCH" -p "$PORT" -U postgres -d "$DB" \
		-c "SELECT count(*) FROM bench.staging WHERE arrival < $ROWS")
	has_count=$(as_server "$PGBIN/psql" -X -At -h "$SCRATCH" -p "$PORT" -U postgres -d "$DB" \
		-c "SELECT count(*) FROM pg_proc WHERE proname = 'ingest_count' AND pronamespace = 'streamforge'::regnamespace")
	as_server "$srvbin/pg_ctl" -D "$SCRATCH/data" -m fast -w stop >/dev/null
	started=

	for w in "${WLIST[@]}"; do
		entry=$(entry_of "$w")
		events=$row_events
		case "$w" in batch_* | stmt_*) events=$batch_events ;; esac
		extra=()
		[ -n "$REPLAY" ] && extra=(--toggle-collect=sf_advance --toggle-collect=sf_mark_idle)
		if [ "$w" = count_fixed ] && [ "$has_count" = 0 ]; then
			echo "    $label $w: no ingest_count in this tree"
			RUNS+=("$label:${SHAS[$i]}:$w:$events:$entry:-")
			continue
		fi
		out=$SCRATCH/cg/callgrind.out.${label//\//_}.$w
		rm -rf "$SCRATCH/run"
		cp -a "$SCRATCH/data" "$SCRATCH/run"
		script "$w" >"$out.sql"
		sf_is_root && chown postgres:postgres "$out.sql"
		t0=$SECONDS
		as_server valgrind --tool=callgrind --callgrind-out-file="$out" \
			--collect-atstart=no --toggle-collect="$entry" "${extra[@]}" \
			--toggle-collect=sf_xact_callback \
			--toggle-collect=sf_precommit_callback --zero-before=pg_backend_pid \
			"$srvbin/postgres" --single -j -D "$SCRATCH/run" \
			-c fsync=off -c jit=off -c autovacuum=off "$DB" \
			<"$out.sql" >"$out.log" 2>&1 ||
			{ tail -n 30 "$out.log"; sf_die "$label $w: the backend failed"; }
		# (single-user mode prefixes its messages with a timestamp)
		if grep -qE '(^|\] )(ERROR|FATAL|PANIC):' "$out.log"; then
			grep -E '(^|\] )(ERROR|FATAL|PANIC):' "$out.log" | head -5
			sf_die "$label $w: the workload failed ($out.log)"
		fi
		echo "    $label $w: $events events, $((SECONDS - t0)) s under callgrind"
		RUNS+=("$label:${SHAS[$i]}:$w:$events:$entry:$out")
		if [ -n "$REPLAY" ]; then
			printf '%s\n\n' "SELECT streamforge.watermark('warm');" \
				"SELECT pg_backend_pid();" "SELECT streamforge.watermark('cg');" \
				>"$out.replay.sql"
			sf_is_root && chown postgres:postgres "$out.replay.sql"
			as_server valgrind --tool=callgrind --callgrind-out-file="$out.replay" \
				--collect-atstart=no --toggle-collect=sf_persist_open \
				--zero-before=pg_backend_pid \
				"$srvbin/postgres" --single -j -D "$SCRATCH/run" \
				-c fsync=off -c jit=off -c autovacuum=off "$DB" \
				<"$out.replay.sql" >"$out.replay.log" 2>&1 ||
				{ tail -n 30 "$out.replay.log"; sf_die "$label $w: the replay failed"; }
			wi=$(awk '/^(summary|totals):/ { print $2; exit }' "$out")
			ri=$(awk '/^(summary|totals):/ { print $2; exit }' "$out.replay")
			REPLAYS+=("| $label | $w | $events | $((wi / events)) | $((ri / events)) | $(echo "scale=2; $ri / $wi" | bc) |")
		fi
		rm -rf "$SCRATCH/run"
	done
done

# ------------------------------------------------------------------
# Results
# ------------------------------------------------------------------
DATE=$(date -u +%Y-%m-%d)
if [ -z "$NAME" ]; then
	NAME=$DATE
	for l in "${LABELS[@]}"; do NAME+="-${l//[^A-Za-z0-9._-]/_}"; done
fi
mkdir -p "$BENCH/results"
if [ -n "$REPLAY" ]; then
	{
		echo "# Journal replay against the calls that wrote it ($DATE)"
		echo
		echo "Instructions per event (callgrind): the write calls (entry function, advance, mark_idle, commit-time journal flush) and a new backend's load of the pipeline (sf_persist_open: fetch, decode and replay of the whole journal). bench/callgrind.sh --replay, $BATCHES batches of $BS, $ROWS rows."
		echo
		echo "| tree | workload | events | write calls | replay | replay / write |"
		echo "|---|---|---|---|---|---|"
		printf '%s\n' "${REPLAYS[@]}"
	} | tee "$BENCH/results/callgrind-replay-$NAME.md"
	exit 0
fi
sf_say "writing bench/results/callgrind-$NAME.{json,md} ($(elapsed))"
"$PY" "$BENCH/callgrind_report.py" \
	--out-json "$BENCH/results/callgrind-$NAME.json" \
	--out-md "$BENCH/results/callgrind-$NAME.md" \
	--meta started="$DATE" --meta batches="$BATCHES" --meta batch_size="$BS" \
	--meta rows="$ROWS" --meta seed="$SEED" --meta seconds="$((SECONDS - T_START))" \
	--meta valgrind="$(valgrind --version)" \
	--meta postgres="$("$PGBIN/postgres" --version)" \
	"${RUNS[@]}"
# (--latest callgrind-NAME: the results are their own copy)
if [ "$LATEST" != "callgrind-$NAME" ]; then
	cp "$BENCH/results/callgrind-$NAME.json" "$BENCH/results/$LATEST.json"
	cp "$BENCH/results/callgrind-$NAME.md" "$BENCH/results/$LATEST.md"
fi
sf_say "done in $(elapsed)"
