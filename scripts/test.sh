#!/usr/bin/env bash
# scripts/test.sh: the whole streamforge test suite.
#
# Installs the Debian packages it lacks, builds and installs the extension,
# copies the tree (without .git) into a scratch directory owned by the
# server user ("postgres" when run as root), and runs there, as that user:
#
#   1. regress    pg_regress over every sql/*.sql (the Makefile's REGRESS and
#                 REGRESS_OPTS), in SF_REGRESS_SHARDS shards (below), each
#                 on its own temporary instance;
#   2. isolation  pg_isolation_regress over test/specs/*.spec (ISOLATION,
#                 ISOLATION_OPTS: --inputdir=test), on its own temporary
#                 instance;
#   3. tap        prove over each test/t/*.pl, with the environment PGXS's
#                 prove_installcheck sets up; for the tests that name
#                 SF_RELEASE_INSTALL or ReleaseUpgrade (the upgrade tests),
#                 the releases 0.1.0, 0.2.0 and 0.3.0 are built from their
#                 commits into private trees of their own first, once per
#                 run (scripts/lib.sh, sf_release_tree), and passed in
#                 SF_RELEASE_INSTALL_0_1_0 etc. (SF_RELEASE_INSTALL: 0.1.0);
#   4. hooks      every test/run.d/*.sh (C-level tests, fuzz targets), run
#                 from the scratch copy's top directory; exit status 0 is a
#                 pass.
#
# Concurrency.  Each regress shard, the isolation suite, each release build,
# each TAP file and each hook is a job; up to SF_TEST_JOBS jobs run at once
# (default: the number of processors plus two, since many TAP tests wait
# for servers more than they compute).  The regress tests are split into
# SF_REGRESS_SHARDS shards (default 3; 1 when SF_TEST_JOBS is 1) by a hash
# of each test's name, so that a new sql/*.sql file joins a shard without
# moving any other test; each shard is one pg_regress run, in name order, on
# a temporary instance of its own (tests that reuse pipeline or role names
# never meet).  TAP files are independent (PostgreSQL::Test::Cluster locks
# the ports it takes; data directories and logs are named after the test
# file); those that need the releases start once the releases are built.
# Each job writes into a file of its own, and its output is printed whole,
# in the order 1 to 4 above (then by name), as soon as the jobs before it
# have been printed: the log reads as a serial run's, with each block's
# duration in its heading.  SF_TEST_JOBS=1 runs the jobs one at a time,
# in that order, with one regress shard: the serial suite.
#
# Timing.  Every test's duration is in the log (pg_regress's "ok  123 ms",
# each TAP file's and hook's heading); before the summary, a "timing" block
# gives the duration of each phase (packages, build, scratch copy, the
# release builds, the tests) and the slowest tests.  SF_TIMING_FILE=path
# writes every test's duration there (tab-separated: seconds, suite,
# test), sorted, slowest first.
#
# Counting: one per pg_regress test, one per isolation spec, one per TAP
# test file, one per hook.  The last line is "N passed, M failed"; the exit
# status is non-zero if anything failed.  A suite with no inputs is skipped
# with a note.  Temporary instances use the C locale and UTF8; a suite that
# needs server settings names a --temp-config in the Makefile's *_OPTS.
#
# The build is installed into a private copy of the PostgreSQL tree inside
# the scratch directory (scripts/lib.sh, sf_private_tree), never into the
# system one: every server of the suite runs that copy, so checkouts that
# share a machine cannot change the code under test.
#
# Arguments select part of the suite (for development; CI runs it whole):
#   ./scripts/test.sh regress:fixed,sliding isolation tap:020_crash
# runs those two pg_regress tests, every isolation spec and one TAP file.
# A suite named without ":" runs whole; suites not named are skipped.
#
# Memory checking (on demand, not in CI; docs/testing.md):
#   ./scripts/test.sh --valgrind [suites]   servers under valgrind memcheck
#   ./scripts/test.sh --asan [suites]       extension built with ASan/UBSan
# Without suites these run regress and isolation.  Besides the tests' own
# results, every finding (scripts/memcheck.sh says what counts) is a
# failure, and the summary names the file that holds the reports.
#
# Environment: SF_KEEP_SCRATCH=1 keeps the scratch directory even on
# success; SF_TEST_JOBS, SF_REGRESS_SHARDS and SF_TIMING_FILE as above.
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/memcheck.sh
. "$(dirname "${BASH_SOURCE[0]}")/memcheck.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
# A hang guard per job, not a measurement: a job shares the processors
# with the others, and on a machine shared with other work a regress shard
# has taken more than 900 s.
SUITE_TIMEOUT=1800

passed=0
failed=0
declare -a failures=()
declare -a summary=()
declare -a tap_failed=()
declare -a J_NAME=() J_SUITE=() J_CMD=() J_DEPS=() J_STATE=() J_PID=() J_T0=() J_T1=() J_RC=() J_HEAD=() J_TESTS=()
declare -a start_order=() tap_jobs=() release_jobs=() hook_jobs=()
declare -A suite_jobs=()

# Wall-clock phases ("name seconds"), for the timing block.
run_started=$EPOCHREALTIME
phase_started=$run_started
declare -a phases=()
# phase NAME: the time since the previous phase ended is NAME's
phase() {
	local now=$EPOCHREALTIME
	phases+=("$1|$(elapsed "$phase_started" "$now")")
	phase_started=$now
}
# elapsed T0 T1: seconds from T0 to T1 ($EPOCHREALTIME values), one decimal
elapsed() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'
}

# Every test's duration, slowest first: "seconds<TAB>suite<TAB>test" (the
# pg_regress-style suites' from their logs, the TAP files' and hooks' from
# their jobs).
test_timings() {
	local suite i
	{
		for suite in regress isolation; do
			for i in ${suite_jobs[$suite]:-}; do
				sed -nE 's/^ *(test +)?([^ ]+) +\.\.\. +(ok|FAILED|failed \(ignored\)).* ([0-9]+) ms$/\4\t\2/p' "$(job_log "$i")" |
					awk -F'\t' -v s="$suite" '{ printf "%.1f\t%s\t%s\n", $1 / 1000, s, $2 }'
			done
		done
		for i in "${tap_jobs[@]}" "${hook_jobs[@]}"; do
			[ "${J_STATE[$i]}" = "done" ] || continue
			printf '%s\t%s\t%s\n' "$(elapsed "${J_T0[$i]}" "${J_T1[$i]}")" "${J_SUITE[$i]}" "${J_NAME[$i]}"
		done
	} | sort -t$'\t' -k1,1nr -k2,2 -k3,3
}

# The timing block: the phases, the release builds, the slowest tests.
print_timing() {
	local line i n=0 sec suite name
	sf_say "timing (SF_TEST_JOBS=$SF_TEST_JOBS, SF_REGRESS_SHARDS=$SF_REGRESS_SHARDS, $ncpu processors, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
	for line in "${phases[@]}"; do
		printf '    %-26s %7s s\n' "${line%|*}" "${line##*|}"
	done
	printf '    %-26s %7s s\n' total "$(elapsed "$run_started" "$EPOCHREALTIME")"
	for i in "${release_jobs[@]}"; do
		[ "${J_STATE[$i]}" = "done" ] || continue
		printf '    %-26s %7s s (a job among the tests)\n' "build of ${J_NAME[$i]}" "$(elapsed "${J_T0[$i]}" "${J_T1[$i]}")"
	done
	[ "${#J_NAME[@]}" -gt 0 ] || return 0
	test_timings >"$JOBDIR/timing.tsv"
	if [ -n "${SF_TIMING_FILE:-}" ]; then
		cp "$JOBDIR/timing.tsv" "$SF_TIMING_FILE" || echo "    could not write SF_TIMING_FILE=$SF_TIMING_FILE"
	fi
	echo "    slowest tests ($(wc -l <"$JOBDIR/timing.tsv") timed):"
	while IFS=$'\t' read -r sec suite name && [ "$n" -lt 15 ]; do
		printf '    %7s s  %-9s %s\n' "$sec" "$suite" "$name"
		n=$((n + 1))
	done <"$JOBDIR/timing.tsv"
}

finish() {
	echo
	print_timing
	echo
	sf_say "summary"
	local line
	for line in "${summary[@]}"; do
		echo "    $line"
	done
	if [ ${#missing_expected[@]} -gt 0 ]; then
		echo "    no expected output (not run, counted as failed): ${missing_expected[*]}"
	fi
	if [ "$failed" -gt 0 ]; then
		echo "    failed: ${failures[*]}"
		[ -n "${SCRATCH:-}" ] && echo "    scratch directory kept: $SCRATCH"
	elif [ -n "${SCRATCH:-}" ] && [ -z "${SF_KEEP_SCRATCH:-}" ]; then
		rm -rf "$SCRATCH"
	fi
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

# pg_regress (15) stops the whole run at a test without expected output:
# such tests count as failed up front and the others still run.  Filters
# the names in "$@" that have $1/<name>.out (or an alternative <name>_N.out)
# into the array named by $2; the rest go to the missing list.
declare -a missing_expected=()
filter_expected() {
	local dir=$1 out=$2 t
	shift 2
	local -n keep=$out
	keep=()
	for t in "$@"; do
		if compgen -G "$SCRATCH/$dir/$t.out" >/dev/null ||
			compgen -G "$SCRATCH/$dir/${t}_[0-9].out" >/dev/null; then
			keep+=("$t")
		else
			missing_expected+=("$dir/$t.out")
			failed=$((failed + 1))
			failures+=("$t")
		fi
	done
}

# Count the "... ok" / "... FAILED" result lines of the pg_regress logs of a
# suite's jobs (one per shard): count_pg_regress SUITE JOB...  A test of a
# job without a result line (the run was stopped by the hang guard, or its
# driver died) counts as failed, "(not run)"; a run that failed with every
# test passed (initdb, install, shutdown) counts as one failure, named by
# its job.  The failed tests are named in the summary's "failed:" line as
# SUITE(name ...).
count_pg_regress() {
	local suite=$1 ok=0 bad=0 i log t
	local -a names=() done_names=()
	shift
	for i in "$@"; do
		log=$(job_log "$i")
		mapfile -t done_names < <(sed -nE 's/^ *(test +)?([^ ]+) +\.\.\. +(ok|FAILED)( .*|$)/\2 \3/p' "$log")
		local o=0 b=0
		local -A reported=()
		for t in "${done_names[@]}"; do
			reported["${t% *}"]=1
			if [ "${t##* }" = ok ]; then
				o=$((o + 1))
			else
				b=$((b + 1))
				names+=("${t% *}")
			fi
		done
		for t in ${J_TESTS[$i]}; do
			# no pipe into grep -q here: under pipefail, printf's SIGPIPE
			# when grep stops early made a reported test "not run"
			if [ -z "${reported[$t]:-}" ]; then
				b=$((b + 1))
				names+=("$t(not run)")
			fi
		done
		if [ "${J_RC[$i]}" -ne 0 ] && [ "$b" -eq 0 ]; then
			b=1
			names+=("${J_NAME[$i]}")
		fi
		ok=$((ok + o))
		bad=$((bad + b))
	done
	passed=$((passed + ok))
	failed=$((failed + bad))
	summary+=("$suite: $ok passed, $bad failed")
	[ "$bad" -gt 0 ] && failures+=("$suite(${names[*]})")
	return 0
}

make_var() { sf_make_var "$SCRATCH" "$1"; }

# ------------------------------------------------------------------
# Packages, build, install, scratch copy
# ------------------------------------------------------------------
# Selection: suite -> "" (whole suite) or " name name ..." (those tests)
declare -A only=()
mc_mode=
for arg in "$@"; do
	case "$arg" in
	--valgrind | --asan)
		[ -n "$mc_mode" ] && [ "$mc_mode" != "${arg#--}" ] && sf_die "--valgrind and --asan exclude each other"
		mc_mode=${arg#--}
		;;
	regress | isolation | tap | hooks) only[$arg]="" ;;
	regress:* | isolation:* | tap:* | hooks:*)
		only[${arg%%:*}]+=" ${arg#*:}"
		only[${arg%%:*}]=${only[${arg%%:*}]//,/ }
		;;
	*) sf_die "unknown argument \"$arg\" (expected regress, isolation, tap or hooks, optionally :name,..., or --valgrind, --asan)" ;;
	esac
done
if [ -n "$mc_mode" ]; then
	# regress and isolation unless suites are named; the tests are 2-50
	# times slower, so the hang guard is longer.
	if [ ${#only[@]} -eq 0 ]; then
		only[regress]=""
		only[isolation]=""
	fi
	case "$mc_mode" in
	valgrind) SUITE_TIMEOUT=${SF_MC_TIMEOUT:-14400} ;;
	asan) SUITE_TIMEOUT=${SF_MC_TIMEOUT:-3600} ;;
	esac
	# pg_regress and pg_ctl wait this long for a server to start
	export PGCTLTIMEOUT=${PGCTLTIMEOUT:-900}
	mc_started=$(date +%s)
fi
# selected SUITE: is the suite to run at all?
selected() { [ $# -ge 1 ] && { [ ${#only[@]} -eq 0 ] || [ -n "${only[$1]+x}" ]; }; }
# select_tests SUITE ARRAY: keep only the selected names in ARRAY
select_tests() {
	local -n arr=$2
	local keep=() t w b
	[ ${#only[@]} -eq 0 ] || [ -z "${only[$1]-}" ] && return 0
	for t in "${arr[@]}"; do
		b=$(basename "$t")
		for w in ${only[$1]}; do
			[ "$t" = "$w" ] || [ "$b" = "$w" ] || [ "${b%.*}" = "$w" ] && keep+=("$t")
		done
	done
	arr=("${keep[@]}")
}

ncpu=$(nproc 2>/dev/null || echo 2)
SF_TEST_JOBS=${SF_TEST_JOBS:-$((ncpu + 2))}
[[ "$SF_TEST_JOBS" =~ ^[1-9][0-9]*$ ]] || sf_die "SF_TEST_JOBS must be a positive number (got \"$SF_TEST_JOBS\")"
if [ "$SF_TEST_JOBS" -eq 1 ]; then
	SF_REGRESS_SHARDS=${SF_REGRESS_SHARDS:-1}
else
	SF_REGRESS_SHARDS=${SF_REGRESS_SHARDS:-3}
fi
[[ "$SF_REGRESS_SHARDS" =~ ^[1-9][0-9]*$ ]] || sf_die "SF_REGRESS_SHARDS must be a positive number (got \"$SF_REGRESS_SHARDS\")"

read -r -a mc_packages <<<"$(sf_mc_packages "$mc_mode")"
sf_need_packages "${SF_BUILD_PACKAGES[@]}" "${SF_TEST_PACKAGES[@]}" "${mc_packages[@]}"
sf_check_server_user
phase packages
sf_say "building (make, PG_CONFIG=$PG_CONFIG)"
if ! make -C "$SF_ROOT" -j"$ncpu" PG_CONFIG="$PG_CONFIG"; then
	summary+=("build: failed")
	failures+=(build)
	failed=1
	finish
fi
phase build

SCRATCH=$(mktemp -d /tmp/streamforge-test.XXXXXX)
sf_say "copying the tree to $SCRATCH"
tar -C "$SF_ROOT" --exclude=./.git --exclude=./.demo --exclude=./dist --exclude='./tmp_check*' \
	--exclude=./results --exclude=./output_iso -cf - . | tar -C "$SCRATCH" -xf -
# --asan: the sanitizer build, in the scratch copy, is the one installed
build_dir=$SF_ROOT
if [ "$mc_mode" = asan ]; then
	sf_mc_asan_build "$SCRATCH"
	build_dir=$SCRATCH
fi
sf_say "installing into a private copy of the PostgreSQL tree in $SCRATCH/pg"
if ! (sf_private_tree "$SCRATCH/pg" "$build_dir"); then
	summary+=("install: failed")
	failures+=(install)
	failed=1
	finish
fi
# Every server and client below comes from the private tree.
PGBIN=$SCRATCH/pg$PGBIN
if [ -n "$mc_mode" ]; then
	SF_MC_LOGDIR=$SCRATCH/$mc_mode
	mkdir -p "$SF_MC_LOGDIR"
	sf_mc_wrap_server "$PGBIN" "$mc_mode" "$SF_MC_LOGDIR"
	sf_say "$mc_mode: every server of this run is under $mc_mode; reports in $SF_MC_LOGDIR"
fi
# Settings the memory-checking modes add to the temporary instances.
declare -a mc_driver_opts=()
if [ "$mc_mode" = valgrind ]; then
	# Tests take minutes instead of seconds: without this, autovacuum
	# analyzes tables in the middle of tests that never see it otherwise,
	# and EXPLAIN output changes.
	printf '%s\n' "autovacuum = off" >"$SCRATCH/valgrind.conf"
	mc_driver_opts+=(--temp-config="$SCRATCH/valgrind.conf")
fi
JOBDIR=$SCRATCH/jobs
mkdir -p "$JOBDIR"
sf_is_root && chown -R postgres:postgres "$SCRATCH"
chmod 755 "$SCRATCH"
phase "scratch copy"

run_in_scratch() {
	SF_RUN_DIR=$SCRATCH sf_as_server "$@"
}

# ------------------------------------------------------------------
# The jobs
# ------------------------------------------------------------------
# Job i: J_NAME (what its heading says), J_SUITE, J_CMD (a command line for
# eval), J_DEPS (job numbers it waits for), J_STATE (pending, running,
# done), J_PID, J_T0/J_T1 ($EPOCHREALTIME at start and end), J_RC.  Job
# numbers are the order of printing; start_order is the order of starting.
# add_job SUITE NAME HEADING DEPS COMMAND...: prints the new job's number
# into the variable new_job
add_job() {
	local suite=$1 name=$2 head=$3 deps=$4 i=${#J_NAME[@]}
	shift 4
	J_SUITE[i]=$suite
	J_NAME[i]=$name
	J_HEAD[i]=$head
	J_DEPS[i]=$deps
	J_CMD[i]=$(printf '%q ' "$@")
	J_STATE[i]=pending
	new_job=$i
}

job_log() { printf '%s/%03d.log' "$JOBDIR" "$1"; }

start_job() {
	local i=$1
	J_STATE[i]=running
	J_T0[i]=$EPOCHREALTIME
	(
		eval "${J_CMD[$i]}"
		rc=$?
		[ "$rc" -eq 124 ] && printf '\n(stopped by the hang guard after %s s)\n' "$SUITE_TIMEOUT"
		echo "$rc" >"$JOBDIR/$i.rc"
	) >"$(job_log "$i")" 2>&1 </dev/null &
	J_PID[i]=$!
}

# Every process below pid $1, then $1 itself.
kill_tree() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		kill_tree "$c"
	done
	kill -TERM "$1" 2>/dev/null
}
interrupted() {
	local i
	trap - INT TERM
	echo
	sf_say "interrupted: stopping the running jobs"
	for i in "${!J_STATE[@]}"; do
		[ "${J_STATE[$i]}" = running ] && kill_tree "${J_PID[$i]}"
	done
	wait
	[ -n "${SCRATCH:-}" ] && echo "    scratch directory kept: $SCRATCH"
	exit 130
}

deps_done() {
	local d
	for d in ${J_DEPS[$1]}; do
		[ "${J_STATE[$d]}" = "done" ] || return 1
	done
	return 0
}

# The heading of job i and its output, once.
printed=0
print_ready() {
	while [ "$printed" -lt "${#J_NAME[@]}" ] && [ "${J_STATE[$printed]}" = "done" ]; do
		local i=$printed
		printed=$((printed + 1))
		echo
		if [ -z "${J_NAME[$i]}" ]; then
			sf_say "${J_HEAD[$i]}"
		else
			sf_say "${J_HEAD[$i]} ($(elapsed "${J_T0[$i]}" "${J_T1[$i]}") s)"
		fi
		cat "$(job_log "$i")"
		if [ "${J_SUITE[$i]}" = hooks ] && [ "${J_RC[$i]}" -ne 0 ]; then
			echo "hook ${J_NAME[$i]} FAILED"
		fi
	done
}

# Run every job, SF_TEST_JOBS at a time, the first startable in
# start_order first; print each in job order as soon as it can be.
run_jobs() {
	local running=0 i
	trap interrupted INT TERM
	while :; do
		for i in "${start_order[@]}"; do
			[ "$running" -lt "$SF_TEST_JOBS" ] || break
			[ "${J_STATE[$i]}" = pending ] && deps_done "$i" || continue
			start_job "$i"
			running=$((running + 1))
		done
		[ "$running" -eq 0 ] && break
		wait -n
		for i in "${!J_STATE[@]}"; do
			[ "${J_STATE[$i]}" = running ] || continue
			if [ -s "$JOBDIR/$i.rc" ]; then
				wait "${J_PID[$i]}" 2>/dev/null
				J_RC[i]=$(cat "$JOBDIR/$i.rc")
			elif ! kill -0 "${J_PID[$i]}" 2>/dev/null; then
				# ended without its status (killed): a failure
				J_RC[i]=1
				echo "(the job ended without an exit status)" >>"$(job_log "$i")"
			else
				continue
			fi
			J_STATE[i]="done"
			J_T1[i]=$EPOCHREALTIME
			running=$((running - 1))
		done
		print_ready
	done
	trap - INT TERM
	for i in "${!J_STATE[@]}"; do
		if [ "${J_STATE[$i]}" != "done" ]; then
			# cannot happen: a job waits only for jobs before it
			J_STATE[i]="done"
			J_RC[i]=1
			echo "job ${J_NAME[$i]} never started" >"$(job_log "$i")"
		fi
	done
	print_ready
}

# A suite heading of its own (a job with nothing to run).
add_heading() {
	add_job "$1" "" "$2" "" true
	start_order+=("$new_job")
}

# --- 1. regress, 2. isolation: pg_regress-style suites -------------
# regress_job DRIVER OUTDIR INSTANCE [options and tests]
regress_job() {
	local driver=$1 outdir=$2 instance=$3
	shift 3
	run_in_scratch mkdir -p "$SCRATCH/$outdir"
	local rc=0
	run_in_scratch timeout "$SUITE_TIMEOUT" "$driver" --bindir="$PGBIN" \
		--no-locale --encoding=UTF8 --temp-instance="$SCRATCH/$instance" \
		--outputdir="$outdir" "${mc_driver_opts[@]}" "$@" 2>&1 || rc=$?
	# a driver stopped by the hang guard leaves its server running
	if [ -f "$SCRATCH/$instance/data/postmaster.pid" ]; then
		run_in_scratch "$PGBIN/pg_ctl" -D "$SCRATCH/$instance/data" stop -m immediate >/dev/null 2>&1
	fi
	return "$rc"
}

# Small stable hash of a name (FNV-1a, 31 bits), for the shards.
name_hash() {
	local s=$1 h=2166136261 k c
	for ((k = 0; k < ${#s}; k++)); do
		printf -v c '%d' "'${s:k:1}"
		h=$(((h ^ c) * 16777619 & 0x7fffffff))
	done
	echo "$h"
}

# suite_jobs: the jobs of each pg_regress-style suite ("job numbers")
# add_regress_suite SUITE DRIVER EXPECTED_DIR WHAT TESTS_VAR OPTS_VAR OUTDIR SHARDS
add_regress_suite() {
	local suite=$1 driver=$2 expdir=$3 what=$4 outdir=$7 shards=$8 tests opts k t
	selected "$suite" || return 0
	read -r -a tests <<<"$(make_var "$5")"
	read -r -a opts <<<"$(make_var "$6")"
	select_tests "$suite" tests
	if [ ${#tests[@]} -eq 0 ]; then
		add_heading "$suite" "$suite: no $what yet, skipped"
		summary+=("$suite: skipped (no $what)")
		return
	fi
	filter_expected "$expdir" tests "${tests[@]}"
	if [ ${#tests[@]} -eq 0 ]; then
		summary+=("$suite: nothing with expected output to run")
		return
	fi
	[ "$shards" -gt ${#tests[@]} ] && shards=${#tests[@]}
	if [ "$shards" -eq 1 ]; then
		add_job "$suite" "$suite" "$suite: ${#tests[@]} tests" "" \
			regress_job "$driver" "$outdir" "tmp_$outdir" "${opts[@]}" "${tests[@]}"
		J_TESTS[new_job]="${tests[*]}"
		start_order+=("$new_job")
		suite_jobs[$suite]=$new_job
		return
	fi
	local -a shard=()
	for t in "${tests[@]}"; do
		k=$(($(name_hash "$t") % shards))
		shard[k]+=" $t"
	done
	add_heading "$suite" "$suite: ${#tests[@]} tests in ${#shard[@]} shards, each on its own temporary instance"
	for ((k = 0; k < shards; k++)); do
		[ -n "${shard[k]:-}" ] || continue
		read -r -a t <<<"${shard[k]}"
		add_job "$suite" "$suite-$((k + 1))" \
			"$suite shard $((k + 1))/$shards: ${#t[@]} tests" "" \
			regress_job "$driver" "$outdir-$((k + 1))" "tmp_$outdir-$((k + 1))" "${opts[@]}" "${t[@]}"
		J_TESTS[new_job]="${t[*]}"
		start_order+=("$new_job")
		suite_jobs[$suite]+=" $new_job"
	done
}

add_regress_suite regress "$PGXS_DIR/src/test/regress/pg_regress" \
	expected "sql/*.sql" REGRESS REGRESS_OPTS regress "$SF_REGRESS_SHARDS"
add_regress_suite isolation "$PGXS_DIR/src/test/isolation/pg_isolation_regress" \
	test/expected "test/specs/*.spec" ISOLATION ISOLATION_OPTS output_iso 1

# --- 3. TAP tests, in the environment of PGXS's prove_installcheck ---
# The upgrade tests start from the releases as released: each built from
# its commit (the scratch copy has no .git) into a private tree of its
# own, once for all the tests, as a job.  A release that cannot be built
# gets its reason instead (SF_RELEASE_ERROR_<v>), and the tests that need
# it fail with it.
release_job() {
	local v=$1 rel_install
	if rel_install=$(sf_release_tree "$SCRATCH/release-$v" "$v" 2>"$SCRATCH/release-$v.err"); then
		sf_is_root && chown -R postgres:postgres "$SCRATCH/release-$v"
		printf '%s' "$rel_install" >"$JOBDIR/release-$v.install"
	else
		cat "$SCRATCH/release-$v.err" >"$JOBDIR/release-$v.error"
		sf_say "tap: $(cat "$SCRATCH/release-$v.err")"
	fi
	return 0
}

tap_job() {
	local file=$1 v
	local -a release_env=(SF_RELEASES="${SF_RELEASES[*]}" SF_RELEASE_VERSION="$SF_RELEASE_VERSION")
	for v in "${SF_RELEASES[@]}"; do
		[ -e "$JOBDIR/release-$v.install" ] || [ -e "$JOBDIR/release-$v.error" ] || continue
		local rel_install rel_error
		rel_install=$(cat "$JOBDIR/release-$v.install" 2>/dev/null)
		rel_error=$(cat "$JOBDIR/release-$v.error" 2>/dev/null)
		release_env+=("SF_RELEASE_INSTALL_$(sf_release_var "$v")=$rel_install"
			"SF_RELEASE_ERROR_$(sf_release_var "$v")=$rel_error")
		if [ "$v" = "$SF_RELEASE_VERSION" ]; then
			release_env+=("SF_RELEASE_INSTALL=$rel_install" "SF_RELEASE_ERROR=$rel_error")
		fi
	done
	run_in_scratch env \
		TESTDIR="$SCRATCH" \
		PATH="$PGBIN:$SCRATCH:$PATH" \
		PGPORT=65432 \
		"${release_env[@]}" \
		PG_TEST_TIMEOUT_DEFAULT="${PG_TEST_TIMEOUT_DEFAULT:-600}" \
		PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
		PERL5LIB="$PGXS_DIR/src/test/perl:$SCRATCH${PERL5LIB:+:$PERL5LIB}" \
		timeout "$SUITE_TIMEOUT" \
		prove -I "$PGXS_DIR/src/test/perl/" -I "$SCRATCH" "$file"
}

read -r -a tap_tests <<<"$(make_var PROVE_TESTS)"
select_tests tap tap_tests
if ! selected tap; then
	:
elif [ ${#tap_tests[@]} -eq 0 ]; then
	add_heading tap "tap: no test/t/*.pl yet, skipped"
	summary+=("tap: skipped (no test/t/*.pl)")
else
	add_heading tap "tap: ${#tap_tests[@]} test files"
	run_in_scratch mkdir -p "$SCRATCH/tmp_check"
	declare -a need_releases=()
	mapfile -t need_releases < <(cd "$SCRATCH" && grep -lE 'SF_RELEASE_INSTALL|ReleaseUpgrade' "${tap_tests[@]}" 2>/dev/null)
	rel_deps=
	if [ ${#need_releases[@]} -gt 0 ]; then
		for v in "${SF_RELEASES[@]}"; do
			add_job tap "release-$v" \
				"tap: building release $v ($(sf_release_commit "$v")) into $SCRATCH/release-$v" "" \
				release_job "$v"
			release_jobs+=("$new_job")
			rel_deps+=" $new_job"
		done
	fi
	for t in "${tap_tests[@]}"; do
		deps=
		for n in "${need_releases[@]}"; do
			[ "$n" = "$t" ] && deps=$rel_deps
		done
		add_job tap "$t" "tap: $t" "$deps" tap_job "$t"
		tap_jobs+=("$new_job")
	done
fi

# --- 4. hooks: test/run.d/*.sh -------------------------------------
hook_job() {
	run_in_scratch env SF_ROOT="$SCRATCH" PG_CONFIG="$PG_CONFIG" \
		PGBIN="$PGBIN" PGXS_DIR="$PGXS_DIR" PATH="$PGBIN:$PATH" \
		timeout "$SUITE_TIMEOUT" bash "$1"
}
hooks=()
for h in "$SCRATCH"/test/run.d/*.sh; do
	[ -f "$h" ] && hooks+=("$h")
done
select_tests hooks hooks
if ! selected hooks; then
	:
elif [ ${#hooks[@]} -eq 0 ]; then
	add_heading hooks "hooks: no test/run.d/*.sh yet, skipped"
	summary+=("hooks: skipped (no test/run.d/*.sh)")
else
	for h in "${hooks[@]}"; do
		add_job hooks "${h#"$SCRATCH"/}" "hook: ${h#"$SCRATCH"/}" "" hook_job "$h"
		hook_jobs+=("$new_job")
	done
fi

# The order of starting: the regress shards and isolation (added above),
# then the release builds (the upgrade tests wait for them), the hooks
# (the fuzz targets run for a fixed time), the TAP files in name order.
# One job at a time: the order of printing, the serial suite.
start_order+=("${release_jobs[@]}" "${hook_jobs[@]}" "${tap_jobs[@]}")
if [ "$SF_TEST_JOBS" -eq 1 ]; then
	start_order=("${!J_NAME[@]}")
fi
echo
sf_say "running ${#start_order[@]} jobs, up to $SF_TEST_JOBS at a time ($ncpu processors)"
run_jobs
phase tests

# ------------------------------------------------------------------
# Counting
# ------------------------------------------------------------------
for suite in regress isolation; do
	[ -n "${suite_jobs[$suite]:-}" ] || continue
	# shellcheck disable=SC2086
	count_pg_regress "$suite" ${suite_jobs[$suite]}
done
if [ ${#tap_jobs[@]} -gt 0 ]; then
	tap_ok=0
	tap_bad=0
	for i in "${tap_jobs[@]}"; do
		if [ "${J_RC[$i]}" -eq 0 ]; then
			tap_ok=$((tap_ok + 1))
		else
			tap_bad=$((tap_bad + 1))
			tap_failed+=("${J_NAME[$i]}")
		fi
	done
	passed=$((passed + tap_ok))
	failed=$((failed + tap_bad))
	summary+=("tap: $tap_ok passed, $tap_bad failed")
	[ "$tap_bad" -gt 0 ] && failures+=("tap(${tap_failed[*]})")
fi
if [ ${#hook_jobs[@]} -gt 0 ]; then
	hook_ok=0
	hook_bad=0
	hook_failed=()
	for i in "${hook_jobs[@]}"; do
		if [ "${J_RC[$i]}" -eq 0 ]; then
			hook_ok=$((hook_ok + 1))
		else
			hook_bad=$((hook_bad + 1))
			hook_failed+=("${J_NAME[$i]}")
		fi
	done
	passed=$((passed + hook_ok))
	failed=$((failed + hook_bad))
	summary+=("hooks: $hook_ok passed, $hook_bad failed")
	[ "$hook_bad" -gt 0 ] && failures+=("hooks(${hook_failed[*]})")
fi

# ------------------------------------------------------------------
# --valgrind, --asan: the reports
# ------------------------------------------------------------------
if [ -n "$mc_mode" ]; then
	echo
	if sf_mc_scan "$SF_MC_LOGDIR" "$mc_mode" "$build_dir" "$SCRATCH"; then
		summary+=("$mc_mode: no findings ($(($(date +%s) - mc_started))s)")
	else
		failed=$((failed + 1))
		failures+=("$mc_mode($SF_MC_LOGDIR/findings.txt)")
		summary+=("$mc_mode: findings in $SF_MC_LOGDIR/findings.txt ($(($(date +%s) - mc_started))s)")
	fi
fi

# ------------------------------------------------------------------
# On failure: the diffs and log tails
# ------------------------------------------------------------------
if [ "$failed" -gt 0 ]; then
	for f in "$SCRATCH"/regress*/regression.diffs "$SCRATCH/output_iso/regression.diffs"; do
		if [ -s "$f" ]; then
			echo
			sf_say "${f#"$SCRATCH"/} (failed: $(grep -E '^diff ' "$f" | sed -E 's|.*/results/([^ ]+)\.out$|\1|' | tr '\n' ' ' | sed 's/ $//'))"
			cat "$f"
		fi
	done
	for f in "$SCRATCH"/tmp_check/log/regress_log_*; do
		[ -f "$f" ] || continue
		for t in "${tap_failed[@]}"; do
			if [ "regress_log_$(basename "$t" .pl)" = "$(basename "$f")" ]; then
				echo
				sf_say "tail of ${f#"$SCRATCH"/}"
				tail -n 40 "$f"
			fi
		done
	done
fi

finish
