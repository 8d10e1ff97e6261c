#!/usr/bin/env bash
# scripts/test.sh: the whole streamforge test suite.
#
# Installs the Debian packages it lacks, builds and installs the extension,
# copies the tree (without .git) into a scratch directory owned by the
# server user ("postgres" when run as root), and runs there, as that user:
#
#   1. regress    pg_regress over every sql/*.sql (the Makefile's REGRESS and
#                 REGRESS_OPTS), on its own temporary instance;
#   2. isolation  pg_isolation_regress over test/specs/*.spec (ISOLATION,
#                 ISOLATION_OPTS: --inputdir=test), on its own temporary
#                 instance;
#   3. tap        prove over test/t/*.pl, with the environment PGXS's
#                 prove_installcheck sets up; for the tests that name
#                 SF_RELEASE_INSTALL (the upgrade tests), the releases
#                 0.1.0 and 0.2.0 are built from their commits into private
#                 trees of their own first, once per run (scripts/lib.sh,
#                 sf_release_tree), and passed in SF_RELEASE_INSTALL_0_1_0
#                 and SF_RELEASE_INSTALL_0_2_0 (SF_RELEASE_INSTALL: 0.1.0);
#   4. hooks      every test/run.d/*.sh (C-level tests, fuzz targets), run
#                 from the scratch copy's top directory; exit status 0 is a
#                 pass.
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
# Environment: SF_KEEP_SCRATCH=1 keeps the scratch directory even on success.
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/memcheck.sh
. "$(dirname "${BASH_SOURCE[0]}")/memcheck.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
SUITE_TIMEOUT=900				# a hang guard, not a measurement

passed=0
failed=0
declare -a failures=()
declare -a summary=()
declare -a tap_failed=()

finish() {
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

# Count the "... ok" / "... FAILED" result lines of a pg_regress log.  A run
# that failed without any failed test line (initdb, install, crash of the
# driver) counts as one failure of the suite.
count_pg_regress() {
	local suite=$1 log=$2 rc=$3 ok bad
	ok=$(grep -cE '^ *(test +)?[^ ]+ +\.\.\. ok( |$)' "$log")
	bad=$(grep -cE '^ *(test +)?[^ ]+ +\.\.\. FAILED( |$)' "$log")
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		bad=1
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	summary+=("$suite: $ok passed, $bad failed")
	[ "$bad" -gt 0 ] && failures+=("$suite")
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

read -r -a mc_packages <<<"$(sf_mc_packages "$mc_mode")"
sf_need_packages "${SF_BUILD_PACKAGES[@]}" "${SF_TEST_PACKAGES[@]}" "${mc_packages[@]}"
sf_check_server_user
sf_say "building (make, PG_CONFIG=$PG_CONFIG)"
if ! make -C "$SF_ROOT" -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG"; then
	summary+=("build: failed")
	failures+=(build)
	failed=1
	finish
fi

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
sf_is_root && chown -R postgres:postgres "$SCRATCH"
chmod 755 "$SCRATCH"

run_in_scratch() {
	SF_RUN_DIR=$SCRATCH sf_as_server "$@"
}

# Runs a pg_regress-style suite: run_regress_suite SUITE DRIVER EXPECTED_DIR
# WHAT TESTS_VAR OPTS_VAR [driver options...], with the test names and
# options taken from the Makefile variables TESTS_VAR and OPTS_VAR.
run_regress_suite() {
	local suite=$1 driver=$2 expdir=$3 what=$4 tests opts
	selected "$suite" || return 0
	read -r -a tests <<<"$(make_var "$5")"
	read -r -a opts <<<"$(make_var "$6")"
	shift 6
	select_tests "$suite" tests
	echo
	if [ ${#tests[@]} -eq 0 ]; then
		sf_say "$suite: no $what yet, skipped"
		summary+=("$suite: skipped (no $what)")
		return
	fi
	filter_expected "$expdir" tests "${tests[@]}"
	if [ ${#tests[@]} -eq 0 ]; then
		summary+=("$suite: nothing with expected output to run")
		return
	fi
	sf_say "$suite: ${#tests[@]} tests"
	run_in_scratch timeout "$SUITE_TIMEOUT" "$driver" --bindir="$PGBIN" \
		--no-locale --encoding=UTF8 "$@" "${opts[@]}" "${tests[@]}" 2>&1 |
		tee "$SCRATCH/$suite.log"
	count_pg_regress "$suite" "$SCRATCH/$suite.log" "${PIPESTATUS[0]}"
}

# ------------------------------------------------------------------
# 1. pg_regress, 2. isolation tester: each on its own temporary instance
# ------------------------------------------------------------------
run_regress_suite regress "$PGXS_DIR/src/test/regress/pg_regress" \
	expected "sql/*.sql" REGRESS REGRESS_OPTS \
	--temp-instance="$SCRATCH/tmp_regress" "${mc_driver_opts[@]}"
run_regress_suite isolation "$PGXS_DIR/src/test/isolation/pg_isolation_regress" \
	test/expected "test/specs/*.spec" ISOLATION ISOLATION_OPTS \
	--temp-instance="$SCRATCH/tmp_check_iso" --outputdir=output_iso "${mc_driver_opts[@]}"

# ------------------------------------------------------------------
# 3. TAP tests, in the environment of PGXS's prove_installcheck
# ------------------------------------------------------------------
read -r -a tap_tests <<<"$(make_var PROVE_TESTS)"
select_tests tap tap_tests
echo
if ! selected tap; then
	:
elif [ ${#tap_tests[@]} -eq 0 ]; then
	sf_say "tap: no test/t/*.pl yet, skipped"
	summary+=("tap: skipped (no test/t/*.pl)")
else
	sf_say "tap: ${#tap_tests[@]} test files"
	run_in_scratch rm -rf "$SCRATCH/tmp_check"
	run_in_scratch mkdir -p "$SCRATCH/tmp_check"
	# The upgrade tests start from the releases as released: each built
	# from its commit (the scratch copy has no .git) into a private tree of
	# its own, once for all the tests.  A release that cannot be built gets
	# its reason instead (SF_RELEASE_ERROR_<v>), and the tests that need it
	# fail with it.
	release_env=(SF_RELEASES="${SF_RELEASES[*]}" SF_RELEASE_VERSION="$SF_RELEASE_VERSION")
	if grep -l SF_RELEASE_INSTALL "${tap_tests[@]/#/$SCRATCH/}" >/dev/null 2>&1; then
		for v in "${SF_RELEASES[@]}"; do
			rel_install=
			rel_error=
			sf_say "tap: building release $v ($(sf_release_commit "$v")) into $SCRATCH/release-$v"
			if rel_install=$(sf_release_tree "$SCRATCH/release-$v" "$v" 2>"$SCRATCH/release-$v.err"); then
				sf_is_root && chown -R postgres:postgres "$SCRATCH/release-$v"
			else
				rel_error=$(cat "$SCRATCH/release-$v.err")
				rel_install=
				sf_say "tap: $rel_error"
			fi
			release_env+=("SF_RELEASE_INSTALL_$(sf_release_var "$v")=$rel_install"
				"SF_RELEASE_ERROR_$(sf_release_var "$v")=$rel_error")
			if [ "$v" = "$SF_RELEASE_VERSION" ]; then
				release_env+=("SF_RELEASE_INSTALL=$rel_install" "SF_RELEASE_ERROR=$rel_error")
			fi
		done
	fi
	tap_ok=0
	tap_bad=0
	for t in "${tap_tests[@]}"; do
		if run_in_scratch env \
			TESTDIR="$SCRATCH" \
			PATH="$PGBIN:$SCRATCH:$PATH" \
			PGPORT=65432 \
			"${release_env[@]}" \
			PG_TEST_TIMEOUT_DEFAULT="${PG_TEST_TIMEOUT_DEFAULT:-600}" \
			PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
			PERL5LIB="$PGXS_DIR/src/test/perl:$SCRATCH${PERL5LIB:+:$PERL5LIB}" \
			timeout "$SUITE_TIMEOUT" \
			prove -I "$PGXS_DIR/src/test/perl/" -I "$SCRATCH" "$t"; then
			tap_ok=$((tap_ok + 1))
		else
			tap_bad=$((tap_bad + 1))
			tap_failed+=("$t")
		fi
	done
	passed=$((passed + tap_ok))
	failed=$((failed + tap_bad))
	summary+=("tap: $tap_ok passed, $tap_bad failed")
	[ "$tap_bad" -gt 0 ] && failures+=("tap(${tap_failed[*]})")
fi

# ------------------------------------------------------------------
# 4. hooks: test/run.d/*.sh
# ------------------------------------------------------------------
hooks=()
for h in "$SCRATCH"/test/run.d/*.sh; do
	[ -f "$h" ] && hooks+=("$h")
done
select_tests hooks hooks
echo
if ! selected hooks; then
	:
elif [ ${#hooks[@]} -eq 0 ]; then
	sf_say "hooks: no test/run.d/*.sh yet, skipped"
	summary+=("hooks: skipped (no test/run.d/*.sh)")
else
	hook_ok=0
	hook_bad=0
	hook_failed=()
	for h in "${hooks[@]}"; do
		name=${h#"$SCRATCH"/}
		sf_say "hook: $name"
		if run_in_scratch env SF_ROOT="$SCRATCH" PG_CONFIG="$PG_CONFIG" \
			PGBIN="$PGBIN" PGXS_DIR="$PGXS_DIR" PATH="$PGBIN:$PATH" \
			timeout "$SUITE_TIMEOUT" bash "$h"; then
			hook_ok=$((hook_ok + 1))
		else
			hook_bad=$((hook_bad + 1))
			hook_failed+=("$name")
			echo "hook $name FAILED"
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
		summary+=("$mc_mode: no findings ($(( $(date +%s) - mc_started ))s)")
	else
		failed=$((failed + 1))
		failures+=("$mc_mode($SF_MC_LOGDIR/findings.txt)")
		summary+=("$mc_mode: findings in $SF_MC_LOGDIR/findings.txt ($(( $(date +%s) - mc_started ))s)")
	fi
fi

# ------------------------------------------------------------------
# On failure: the diffs and log tails
# ------------------------------------------------------------------
if [ "$failed" -gt 0 ]; then
	for f in "$SCRATCH/regression.diffs" "$SCRATCH/output_iso/regression.diffs"; do
		if [ -s "$f" ]; then
			echo
			sf_say "${f#"$SCRATCH"/}"
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
