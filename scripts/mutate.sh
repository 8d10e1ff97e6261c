#!/usr/bin/env bash
# scripts/mutate.sh: a mutation campaign over src/ (on demand; not part of
# scripts/test.sh).  See docs/mutation.md.
#
# Each mutant of the list (scripts/mutants.tsv: id, file, pattern,
# replacement, what it breaks) is one textual change to one file.  The tree
# is copied (without .git) into a scratch directory, built once, and
# installed into a private copy of the PostgreSQL tree there (scripts/lib.sh,
# sf_private_tree), never into the system one.  The unmutated build must
# pass the selected suites first.  Then, per mutant: the file is restored,
# the change applied (the pattern must occur exactly once), the build
# redone (only that object is recompiled; warnings are not errors here) and
# installed into the private tree, and the suites run until one fails:
# pg_regress (sql/*.sql), the isolation specs (test/specs/*.spec), and with
# --tap the TAP tests (test/t/*.pl).  A mutant is caught when a suite fails
# (or hangs past the suite timeout), survives when all pass, and is
# "stillborn" when it does not build, "stale" when its pattern does not
# occur exactly once (the list needs an update).
#
# The result is a table, one line per mutant, and the kill rate over the
# mutants that can change a result (those whose "what it breaks" does not
# start with "equivalent:").  Exit status: 0 if that rate is at least 95%
# and nothing is stale, 1 otherwise, 2 if the unmutated tree fails.
#
# Usage: scripts/mutate.sh [--tap] [--only id,id,...] [--list FILE]...
#                          [--prior FILE] [--record FILE] [--shard K/N]
#                          [--keep]
#   --tap      also run the TAP tests (slow)
#   --only     run only these mutants
#   --list     a mutant list (default scripts/mutants.tsv); given more than
#              once, the lists run one after the other
#   --prior    a record of an earlier campaign (--record's format: id, then
#              "regress:test,..." or "isolation:spec,..." for a caught
#              mutant): a mutant caught before runs the first test that
#              caught it first, alone, and is caught if that test fails
#              (the test is first checked to pass alone on the unmutated
#              tree); otherwise, or if it passes, the whole suites run
#   --record   write, per mutant: id, what caught it (or SURVIVED,
#              stillborn, stale), seconds
#   --shard K/N  run only the mutants whose position in the lists is K
#              modulo N (0 <= K < N): N campaigns in parallel, each with
#              its own scratch directory
#   --skip-equivalent  do not run the mutants marked equivalent (they
#              cannot change the kill rate; each costs whole suites)
#   --keep     keep the scratch directory
#   --asan     build the extension with AddressSanitizer and UBSan and run
#              every server under them (scripts/memcheck.sh, as
#              scripts/test.sh --asan): a mutant whose out-of-bounds access
#              or undefined behaviour a test reaches is caught (the
#              sanitizer ends the backend); slower, so use it with --only
#              or --tests
#   --tests SUITE:NAME,...  run only these tests (SUITE regress or isolation;
#              a NAME may be a glob, as random_*; given more than once,
#              the selections add up): the unmutated tree and every mutant
#              run those, each suite only if it has a selected test
#
#        scripts/mutate.sh hunt RANGE [--kinds K,...] [--max N] [--equivalent FILE]
#                          [--tests ...]
#                          [other options above] [-- PATH[:A-B]...]
#   hunt mode: the mutants are not read from a list but written by
#   scripts/hunt.py over the lines of src/*.c that the git RANGE (A..B, or
#   A: A to the working tree) added or changed, or only over the PATHs
#   (FILE:A-B: its lines A to B): comparison flips, off-by-ones at bounds,
#   dropped carries and accumulations, skipped frees, swapped SQLSTATEs
#   (--kinds cmp,off1,carry,free,state; --max N keeps N of them, spread
#   over the list).  Without --tests, the tests are those the range added
#   or changed (sql/*.sql, test/specs/*.spec), or the whole suites if it
#   changed none.  The report is the same table and kill rate; the list
#   is kept as hunt.tsv in the scratch directory (with --keep) and, with
#   --record, the record names each mutant.  A mutant listed in
#   scripts/hunt-equivalent.tsv (or --equivalent FILE) is marked
#   equivalent, as argued in docs/mutation.md.
# Environment: SF_MUTATE_TIMEOUT, seconds per suite run (default 900).
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/memcheck.sh
. "$(dirname "${BASH_SOURCE[0]}")/memcheck.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE

ROOT=$SF_ROOT
LISTS=()
PRIOR=""
RECORD=""
SHARD_K=0
SHARD_N=1
SKIP_EQ=0
WITH_TAP=0
KEEP=0
ASAN=0
ONLY=""
TIMEOUT=${SF_MUTATE_TIMEOUT:-900}
HUNT=""
HUNT_ARGS=()
HUNT_PATHS=()
TESTS_GIVEN=0
SEL_REGRESS=()
SEL_ISO=()
if [ "${1:-}" = hunt ]; then
	[ $# -ge 2 ] || sf_die "hunt needs a git range (scripts/mutate.sh hunt A..B)"
	HUNT=$2
	shift 2
fi
while [ $# -gt 0 ]; do
	case "$1" in
	--kinds | --max | --equivalent)
		[ -n "$HUNT" ] || sf_die "$1 is an option of the hunt mode"
		HUNT_ARGS+=("$1" "$2")
		shift
		;;
	--tests)
		TESTS_GIVEN=1
		[[ $2 =~ ^(regress|isolation):([A-Za-z0-9_*?,]+)$ ]] ||
			sf_die "--tests expects regress:NAME,... or isolation:NAME,..., not \"$2\""
		IFS=, read -r -a names <<<"${BASH_REMATCH[2]}"
		if [ "${BASH_REMATCH[1]}" = regress ]; then
			SEL_REGRESS+=("${names[@]}")
		else
			SEL_ISO+=("${names[@]}")
		fi
		shift
		;;
	--)
		[ -n "$HUNT" ] || sf_die "paths after -- are for the hunt mode"
		shift
		HUNT_PATHS=("$@")
		break
		;;
	--tap) WITH_TAP=1 ;;
	--keep) KEEP=1 ;;
	--asan) ASAN=1 ;;
	--skip-equivalent) SKIP_EQ=1 ;;
	--only) ONLY=",$2,"; shift ;;
	--list) LISTS+=("$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift ;;
	--prior) PRIOR=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift ;;
	--record) RECORD=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift ;;
	--shard)
		[[ $2 =~ ^([0-9]+)/([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ] ||
			sf_die "--shard expects K/N with 0 <= K < N, not \"$2\""
		SHARD_K=${BASH_REMATCH[1]}
		SHARD_N=${BASH_REMATCH[2]}
		shift
		;;
	*) sf_die "unknown argument \"$1\" (see the head of $0)" ;;
	esac
	shift
done
if [ -n "$HUNT" ]; then
	[ ${#LISTS[@]} -eq 0 ] || sf_die "hunt mode writes its own list: no --list"
	git -C "$ROOT" rev-parse --verify -q "${HUNT%%..*}^{commit}" >/dev/null ||
		sf_die "hunt: \"${HUNT%%..*}\" is not a commit of $ROOT"
	HUNT_LIST=$(mktemp /tmp/streamforge-hunt.XXXXXX.tsv)
	python3 "$ROOT/scripts/hunt.py" "${HUNT_ARGS[@]}" "$ROOT" "$HUNT" -- "${HUNT_PATHS[@]}" \
		>"$HUNT_LIST" || sf_die "hunt: scripts/hunt.py failed"
	sf_say "hunt over $HUNT: $(grep -vc '^#' "$HUNT_LIST") mutants"
	LISTS=("$HUNT_LIST")
	if [ $TESTS_GIVEN -eq 0 ]; then
		# the tests the range added or changed
		while IFS= read -r f; do
			case "$f" in
			sql/*.sql) n=${f#sql/}; SEL_REGRESS+=("${n%.sql}") ;;
			test/specs/*.spec) n=${f#test/specs/}; SEL_ISO+=("${n%.spec}") ;;
			esac
		done < <(git -C "$ROOT" diff --name-only --diff-filter=AM "$HUNT" -- 'sql/*.sql' 'test/specs/*.spec')
		[ $((${#SEL_REGRESS[@]} + ${#SEL_ISO[@]})) -eq 0 ] || TESTS_GIVEN=1
	fi
fi
[ ${#LISTS[@]} -gt 0 ] || LISTS=("$ROOT/scripts/mutants.tsv")
for l in "${LISTS[@]}"; do
	[ -f "$l" ] || sf_die "no mutant list $l"
done
[ -z "$PRIOR" ] || [ -f "$PRIOR" ] || sf_die "no prior record $PRIOR"
if [ -n "$RECORD" ]; then
	: >"$RECORD" || sf_die "cannot write $RECORD"
fi
command -v python3 >/dev/null || sf_die "python3 is needed to apply mutants"

sf_check_server_user
WORK=$(mktemp -d /tmp/streamforge-mutate.XXXXXX)
TREE=$WORK/tree
PRISTINE=$WORK/pristine
SESSION_FILE=$WORK/suite.sid
GRACE=5

# Whether process $1 exists and is not a zombie
alive() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $st != Z* ]]
}

# stop_pids PID...: SIGTERM, then SIGKILL to those still there after $GRACE s
stop_pids() {
	local p i left=()
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	for ((i = 0; i < GRACE * 5; i++)); do
		left=()
		for p in "$@"; do alive "$p" && left+=("$p"); done
		[ ${#left[@]} -eq 0 ] && return 0
		sleep 0.2
	done
	kill -KILL "${left[@]}" 2>/dev/null
	return 0
}

# Stop what is left of the session the last suite ran in (run_suite): its
# processes, whatever process group they moved to
stop_session() {
	local sid
	sid=$(cat "$SESSION_FILE" 2>/dev/null) || return 0
	rm -f "$SESSION_FILE"
	[[ $sid =~ ^[0-9]+$ ]] || return 0
	# shellcheck disable=SC2046
	stop_pids $(ps -eo pid=,sid= | awk -v s="$sid" '$2 == s { print $1 }')
}

# Stop every server started from the scratch directory, whichever session
# it is in (pg_ctl, so the TAP tests' clusters, starts it in a session of
# its own, and each backend is in one of its own): first each postmaster
# with a postmaster.pid under $WORK, by "pg_ctl stop -m immediate" (SIGQUIT
# ends even a backend looping without CHECK_FOR_INTERRUPTS), then, TERM and
# KILL, what is left of them, their children and any process running a
# binary of the scratch directory (the private tree's postgres and psql,
# found when their data directory is gone).
stop_servers() {
	local f pid exe p pids=() left=()
	[ -d "$WORK" ] || return 0
	while IFS= read -r -d '' f; do
		pid=$(sed -n 1p "$f" 2>/dev/null)
		[[ $pid =~ ^[0-9]+$ ]] && alive "$pid" || continue
		exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
		[[ $exe == "$WORK"/* ]] || continue
		pids+=("$pid")
		mapfile -t -O ${#pids[@]} pids < <(ps -eo pid=,ppid= | awk -v p="$pid" '$2 == p { print $1 }')
		sf_as_server "$PGBIN/pg_ctl" stop -D "$(dirname "$f")" -m immediate -w -t 10 \
			>/dev/null 2>&1 </dev/null
	done < <(find "$WORK" -name postmaster.pid -print0 2>/dev/null)
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		[[ $exe == "$WORK"/* ]] && pids+=("${p#/proc/}")
	done
	for p in "${pids[@]}"; do
		alive "$p" && left+=("$p")
	done
	stop_pids "${left[@]}"
}

cleanup() {
	stop_servers
	stop_session
	if [ "$KEEP" -eq 1 ]; then
		sf_say "scratch directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -n "$HUNT" ]; then
	mv "$HUNT_LIST" "$WORK/hunt.tsv"
	HUNT_LIST=$WORK/hunt.tsv
	LISTS=("$HUNT_LIST")
fi
sf_say "copying the tree to $TREE"
mkdir -p "$TREE" "$PRISTINE"
tar -C "$ROOT" --exclude=./.git --exclude=./.demo --exclude='./tmp_check*' \
	--exclude=./results --exclude=./output_iso --exclude='*.o' --exclude='*.so' \
	--exclude='*.bc' -cf - . | tar -C "$TREE" -xf -
cp -a "$TREE/src" "$PRISTINE/src"

# PG_CFLAGS without -Werror: a mutant that leaves a variable unused builds.
# --asan: every object with the sanitizers (COPT, as scripts/memcheck.sh)
COPT_ARGS=()
[ "$ASAN" -eq 0 ] || COPT_ARGS=(COPT="$SF_ASAN_CFLAGS")
build() {
	make -C "$TREE" -s -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" \
		PG_CFLAGS=-Wno-unused-parameter "${COPT_ARGS[@]}" "$@" >"$WORK/build.log" 2>&1 </dev/null
}
if [ "$ASAN" -eq 1 ]; then
	sf_mc_asan_build "$TREE"
else
	sf_say "building the unmutated tree"
	build || { cat "$WORK/build.log"; sf_die "the unmutated tree does not build"; }
fi
sf_say "installing into a private copy of the PostgreSQL tree in $WORK/pg"
(SF_ROOT=$TREE sf_private_tree "$WORK/pg") || sf_die "private install failed"
PRIVBIN=$WORK/pg$PGBIN
install_build() {
	make -C "$TREE" -s PG_CONFIG="$PG_CONFIG" PG_CFLAGS=-Wno-unused-parameter \
		"${COPT_ARGS[@]}" DESTDIR="$WORK/pg" install >>"$WORK/build.log" 2>&1 </dev/null
}
ASAN_LOGS=$WORK/asan
if [ "$ASAN" -eq 1 ]; then
	mkdir -p "$ASAN_LOGS"
	sf_mc_wrap_server "$PRIVBIN" asan "$ASAN_LOGS"
	export PGCTLTIMEOUT=${PGCTLTIMEOUT:-900}
	sf_say "asan: every server of this run is under the sanitizers; reports in $ASAN_LOGS"
fi
# The sanitizer reports since the last call (--asan), moved aside: "asan"
# if there were any
asan_reports() {
	local f n=0
	[ "$ASAN" -eq 1 ] || return 0
	for f in "$ASAN_LOGS"/asan.* "$ASAN_LOGS"/ubsan.*; do
		[ -s "$f" ] || continue
		n=$((n + 1))
		mv "$f" "$ASAN_LOGS/seen.$(basename "$f").$n"
	done
	[ $n -eq 0 ] || echo asan
}
if sf_is_root; then
	chown -R postgres:postgres "$WORK"
fi
chmod 755 "$WORK"

run_as_server() {
	SF_RUN_DIR=$TREE sf_as_server "$@" </dev/null
}

read -r -a REGRESS_TESTS <<<"$(sf_make_var "$TREE" REGRESS)"
read -r -a REGRESS_OPTS <<<"$(sf_make_var "$TREE" REGRESS_OPTS)"
read -r -a ISO_TESTS <<<"$(sf_make_var "$TREE" ISOLATION)"
read -r -a ISO_OPTS <<<"$(sf_make_var "$TREE" ISOLATION_OPTS)"
read -r -a TAP_TESTS <<<"$(sf_make_var "$TREE" PROVE_TESTS)"

# select_tests ALL-NAME SELECTED...: the tests of array ALL-NAME that match
# one of the SELECTED globs, in ALL's order (dies if a glob matches none)
select_tests() {
	local -n all=$1
	local g t hit out=()
	shift
	for g in "$@"; do
		hit=0
		for t in "${all[@]}"; do
			# shellcheck disable=SC2053
			[[ $t == $g ]] && hit=1
		done
		[ $hit -eq 1 ] || sf_die "--tests: no test matches \"$g\""
	done
	for t in "${all[@]}"; do
		for g in "$@"; do
			# shellcheck disable=SC2053
			if [[ $t == $g ]]; then
				out+=("$t")
				break
			fi
		done
	done
	printf '%s\n' "${out[@]}"
}
if [ $TESTS_GIVEN -eq 1 ]; then
	if [ ${#SEL_REGRESS[@]} -gt 0 ]; then
		mapfile -t REGRESS_TESTS < <(select_tests REGRESS_TESTS "${SEL_REGRESS[@]}")
	else
		REGRESS_TESTS=()
	fi
	if [ ${#SEL_ISO[@]} -gt 0 ]; then
		mapfile -t ISO_TESTS < <(select_tests ISO_TESTS "${SEL_ISO[@]}")
	else
		ISO_TESTS=()
	fi
	[ "$WITH_TAP" -eq 0 ] || sf_die "--tests selects regress and isolation tests; no --tap with it"
	sf_say "tests: regress ${REGRESS_TESTS[*]:-(none)}; isolation ${ISO_TESTS[*]:-(none)}"
fi

# The tests a pg_regress log reports as failed, comma-separated
failed_tests() {
	grep -E '\.\.\. FAILED' "$1" | sed -E 's/^ *(test +)?([^ ]+) .*/\2/' | paste -sd, -
}

# run_suite LOG COMMAND...: run COMMAND as the server user from $TREE, its
# output to LOG, in a session of its own (setsid; the session id goes to
# $SESSION_FILE for the EXIT trap); its exit status, 124 if it ran past
# $TIMEOUT seconds.  Then whatever it left running, in its session or a
# server under $WORK, is stopped: after a timeout that is the temp instance
# and the backend that hangs.  The servers go first, while their
# postmaster.pid still names a live postmaster: a SIGTERM to the session
# would ask the postmaster for a smart shutdown, which waits for the
# looping backend.
run_suite() {
	local log=$1 job rc=124 deadline=$((SECONDS + TIMEOUT))
	shift
	rm -f "$SESSION_FILE"
	# shellcheck disable=SC2016
	run_as_server setsid bash -c 'echo $$ >"$0" && exec "$@"' "$SESSION_FILE" "$@" \
		>"$log" 2>&1 &
	job=$!
	while [ $SECONDS -lt $deadline ]; do
		if ! kill -0 "$job" 2>/dev/null; then
			wait "$job"
			rc=$?
			break
		fi
		sleep 1
	done
	stop_servers
	stop_session
	wait "$job" 2>/dev/null
	if [ $rc -eq 124 ]; then
		echo "(timed out after $TIMEOUT s: what the run started was stopped)" >>"$log"
	fi
	return $rc
}

# Run the suites; set FAILED_BY to the first that failed ("regress",
# "isolation", "tap:<file>", with "(timeout)" for a hang), or to nothing if
# all passed.  (Not run in $(...): the EXIT trap must see the suites'
# session, and a signal must not wait for a subshell.)
run_suites() {
	local rc
	FAILED_BY=
	run_as_server rm -rf "$TREE/tmp_regress" "$TREE/tmp_iso" "$TREE/results" \
		"$TREE/output_iso" "$TREE/tmp_check"
	if [ ${#REGRESS_TESTS[@]} -gt 0 ]; then
		run_suite "$WORK/regress.log" "$PGXS_DIR/src/test/regress/pg_regress" \
			--bindir="$PRIVBIN" --no-locale --encoding=UTF8 \
			--temp-instance="$TREE/tmp_regress" "${REGRESS_OPTS[@]}" \
			"${REGRESS_TESTS[@]}"
		rc=$?
		if [ $rc -ne 0 ]; then
			[ $rc -eq 124 ] && FAILED_BY="regress(timeout)" ||
				FAILED_BY="regress:$(failed_tests "$WORK/regress.log")"
			return
		fi
	fi
	if [ ${#ISO_TESTS[@]} -gt 0 ]; then
		run_suite "$WORK/isolation.log" "$PGXS_DIR/src/test/isolation/pg_isolation_regress" \
			--bindir="$PRIVBIN" --no-locale --encoding=UTF8 \
			--temp-instance="$TREE/tmp_iso" --outputdir=output_iso "${ISO_OPTS[@]}" \
			"${ISO_TESTS[@]}"
		rc=$?
		if [ $rc -ne 0 ]; then
			[ $rc -eq 124 ] && FAILED_BY="isolation(timeout)" ||
				FAILED_BY="isolation:$(failed_tests "$WORK/isolation.log")"
			return
		fi
	fi
	[ "$WITH_TAP" -eq 1 ] || return
	local t
	run_as_server mkdir -p "$TREE/tmp_check"
	for t in "${TAP_TESTS[@]}"; do
		run_suite "$WORK/tap.log" env TESTDIR="$TREE" PATH="$PRIVBIN:$TREE:$PATH" PGPORT=65432 \
			PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
			PERL5LIB="$PGXS_DIR/src/test/perl:$TREE${PERL5LIB:+:$PERL5LIB}" \
			prove -I "$PGXS_DIR/src/test/perl/" -I "$TREE" "$t"
		rc=$?
		if [ $rc -ne 0 ]; then
			[ $rc -eq 124 ] && FAILED_BY="tap:$(basename "$t")(timeout)" ||
				FAILED_BY="tap:$(basename "$t")"
			return
		fi
	done
}

# run_alone KIND TEST: run one regression test (KIND regress) or isolation
# spec (KIND isolation) alone, in a temporary instance of its own; the exit
# status of the run (124 past the timeout)
run_alone() {
	local kind=$1 t=$2
	run_as_server rm -rf "$TREE/tmp_regress" "$TREE/tmp_iso" "$TREE/results" \
		"$TREE/output_iso"
	if [ "$kind" = regress ]; then
		run_suite "$WORK/alone.log" "$PGXS_DIR/src/test/regress/pg_regress" \
			--bindir="$PRIVBIN" --no-locale --encoding=UTF8 \
			--temp-instance="$TREE/tmp_regress" "${REGRESS_OPTS[@]}" "$t"
	else
		run_suite "$WORK/alone.log" "$PGXS_DIR/src/test/isolation/pg_isolation_regress" \
			--bindir="$PRIVBIN" --no-locale --encoding=UTF8 \
			--temp-instance="$TREE/tmp_iso" --outputdir=output_iso "${ISO_OPTS[@]}" "$t"
	fi
}

# apply FILE PATTERN REPLACEMENT: exit status 0 if applied, 3 if the pattern
# does not occur exactly once
apply_mutant() {
	python3 - "$TREE/$1" "$2" "$3" <<'EOF'
import sys
def dec(s):
    return s.replace('\\\\', '\0').replace('\\n', '\n').replace('\\t', '\t').replace('\0', '\\')
path, pat, rep = sys.argv[1], dec(sys.argv[2]), dec(sys.argv[3])
src = open(path).read()
if src.count(pat) != 1:
    sys.exit(3)
open(path, 'w').write(src.replace(pat, rep))
EOF
}

# Put back every source file a mutant changed (a fresh mtime: make rebuilds
# exactly those)
restore_sources() {
	local f rel
	while IFS= read -r -d '' f; do
		rel=${f#"$PRISTINE"/}
		cmp -s "$f" "$TREE/$rel" || cp "$f" "$TREE/$rel"
	done < <(find "$PRISTINE/src" -type f -print0)
}

sf_say "running the unmutated tree"
start=$(date +%s)
run_suites
base=$FAILED_BY
if [ -n "$base" ]; then
	sf_say "the unmutated tree fails $base; logs in $WORK"
	KEEP=1
	exit 2
fi
if [ -n "$(asan_reports)" ]; then
	sf_say "the unmutated tree has sanitizer reports ($ASAN_LOGS); logs in $WORK"
	KEEP=1
	exit 2
fi
sf_say "unmutated tree passes ($(($(date +%s) - start)) s per run)"

# The mutants this run takes: id, file, pattern, replacement, what (one
# line each, tab-separated), every list in order, this shard's positions
declare -a MUTANTS=()
pos=0
for l in "${LISTS[@]}"; do
	while IFS= read -r line; do
		case "$line" in '' | '#'*) continue ;; esac
		id=${line%%$'\t'*}
		# five non-empty fields: read's tab splitting drops empty ones, so
		# an empty replacement would shift the description into its place
		[[ $line =~ ^[^$'\t']+$'\t'[^$'\t']+$'\t'[^$'\t']+$'\t'[^$'\t']+$'\t'[^$'\t']+$ ]] ||
			sf_die "mutant $id of $l: not five non-empty tab-separated fields (an empty replacement is written \\t; or similar)"
		[ -n "$ONLY" ] && [[ "$ONLY" != *",$id,"* ]] && continue
		[ "$SKIP_EQ" -eq 1 ] && [[ $line == *$'\t'equivalent:* ]] && continue
		[ $((pos % SHARD_N)) -eq "$SHARD_K" ] && MUTANTS+=("$line")
		pos=$((pos + 1))
	done <"$l"
done
[ ${#MUTANTS[@]} -gt 0 ] || sf_die "no mutant selected"

# --prior: the first test that caught each mutant before, if it is still a
# test of its suite
declare -A QUICK=()
declare -A QUICK_OK=()
if [ -n "$PRIOR" ]; then
	while IFS=$'\t' read -r id how _; do
		[[ $how =~ ^(regress|isolation):([A-Za-z0-9_]+) ]] || continue
		kind=${BASH_REMATCH[1]}
		t=${BASH_REMATCH[2]}
		if [ "$kind" = regress ]; then
			[[ " ${REGRESS_TESTS[*]} " == *" $t "* ]] || continue
		else
			[[ " ${ISO_TESTS[*]} " == *" $t "* ]] || continue
		fi
		QUICK[$id]="$kind:$t"
	done <"$PRIOR"
	# each of those tests must pass alone on the unmutated tree, or its
	# failure on a mutant would prove nothing
	for line in "${MUTANTS[@]}"; do
		id=${line%%$'\t'*}
		q=${QUICK[$id]:-}
		[ -n "$q" ] && [ -z "${QUICK_OK[$q]:-}" ] || continue
		if run_alone "${q%%:*}" "${q#*:}"; then
			QUICK_OK[$q]=yes
		else
			QUICK_OK[$q]=no
			sf_say "$q fails alone on the unmutated tree: not used as a first test"
		fi
	done
	n=0
	for q in "${!QUICK_OK[@]}"; do [ "${QUICK_OK[$q]}" = yes ] && n=$((n + 1)); done
	sf_say "first tests from $PRIOR: $n pass alone on the unmutated tree"
fi

declare -a table=()
caught=0
survived=0
counted=0
stale=0
eq_caught=0
eq_total=0
for line in "${MUTANTS[@]}"; do
	IFS=$'\t' read -r id file pattern replacement what <<<"$line"
	equivalent=0
	[[ "$what" == equivalent:* ]] && equivalent=1
	restore_sources
	apply_mutant "$file" "$pattern" "$replacement"
	rc=$?
	how=""
	secs=""
	if [ $rc -ne 0 ]; then
		result="stale"
		how=stale
		stale=$((stale + 1))
	elif ! build; then
		result="stillborn"
		how=stillborn
	else
		install_build || sf_die "install of mutant $id failed"
		t0=$(date +%s)
		q=${QUICK[$id]:-}
		FAILED_BY=
		if [ -n "$q" ] && [ "${QUICK_OK[$q]}" = yes ]; then
			run_alone "${q%%:*}" "${q#*:}"
			rc=$?
			if [ $rc -eq 124 ]; then
				FAILED_BY="$q(timeout)"
			elif [ $rc -ne 0 ]; then
				FAILED_BY="$q (alone)"
			fi
		fi
		[ -n "$FAILED_BY" ] || run_suites
		failed_by=$FAILED_BY
		# a sanitizer report names the mutant's fault (it ended a backend,
		# so a test failed too)
		if [ -n "$(asan_reports)" ]; then
			failed_by="${failed_by:+$failed_by, }asan report"
		fi
		secs=$(($(date +%s) - t0))
		if [ -n "$failed_by" ]; then
			result="caught by $failed_by"
			how=$failed_by
		else
			result="SURVIVED"
			how=SURVIVED
		fi
		result="$result ($secs s)"
	fi
	[ -z "$RECORD" ] || printf '%s\t%s\t%s\n' "$id" "$how" "$secs" >>"$RECORD"
	if [ $equivalent -eq 1 ]; then
		eq_total=$((eq_total + 1))
		[[ "$result" == caught* ]] && eq_caught=$((eq_caught + 1))
	elif [[ "$result" == caught* ]]; then
		caught=$((caught + 1))
		counted=$((counted + 1))
	elif [[ "$result" == SURVIVED* ]]; then
		survived=$((survived + 1))
		counted=$((counted + 1))
	fi
	line=$(printf '%-26s %-24s %-3s %s' "$id" "$file" "$([ $equivalent -eq 1 ] && echo eq || echo '')" "$result")
	table+=("$line")
	echo "    $line"
done
restore_sources

echo
sf_say "mutation campaign: $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')${HUNT:+, hunt over $HUNT}, suites: $(
	if [ $TESTS_GIVEN -eq 1 ]; then
		echo "regress ${REGRESS_TESTS[*]:-(none)}; isolation ${ISO_TESTS[*]:-(none)}"
	else
		echo "regress, isolation$([ $WITH_TAP -eq 1 ] && echo ', tap')"
	fi
)$([ "$ASAN" -eq 0 ] || echo ', under ASan/UBSan')"
printf '    %-26s %-24s %-3s %s\n' mutant file eq result
for line in "${table[@]}"; do
	echo "    $line"
done
if [ $counted -gt 0 ]; then
	rate=$((caught * 1000 / counted))
	echo "caught $caught of $counted mutants that can change a result: $((rate / 10)).$((rate % 10))%"
else
	rate=0
	echo "no mutant that can change a result was run"
fi
echo "equivalent mutants: $eq_total ($eq_caught of them caught anyway); stale: $stale"
[ $stale -eq 0 ] && [ $rate -ge 950 ]
