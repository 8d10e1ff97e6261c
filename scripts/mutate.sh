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
# Usage: scripts/mutate.sh [--tap] [--only id,id,...] [--list FILE]
#                          [--keep] [--jobs N]
#   --tap      also run the TAP tests (slow)
#   --only     run only these mutants
#   --list     another mutant list (default scripts/mutants.tsv)
#   --keep     keep the scratch directory
# Environment: SF_MUTATE_TIMEOUT, seconds per suite run (default 900).
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE

ROOT=$SF_ROOT
LIST=$ROOT/scripts/mutants.tsv
WITH_TAP=0
KEEP=0
ONLY=""
TIMEOUT=${SF_MUTATE_TIMEOUT:-900}
while [ $# -gt 0 ]; do
	case "$1" in
	--tap) WITH_TAP=1 ;;
	--keep) KEEP=1 ;;
	--only) ONLY=",$2,"; shift ;;
	--list) LIST=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift ;;
	*) sf_die "unknown argument \"$1\" (see the head of $0)" ;;
	esac
	shift
done
[ -f "$LIST" ] || sf_die "no mutant list $LIST"
command -v python3 >/dev/null || sf_die "python3 is needed to apply mutants"

sf_check_server_user
WORK=$(mktemp -d /tmp/streamforge-mutate.XXXXXX)
TREE=$WORK/tree
PRISTINE=$WORK/pristine
cleanup() {
	if [ "$KEEP" -eq 1 ]; then
		sf_say "scratch directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

sf_say "copying the tree to $TREE"
mkdir -p "$TREE" "$PRISTINE"
tar -C "$ROOT" --exclude=./.git --exclude=./.demo --exclude='./tmp_check*' \
	--exclude=./results --exclude=./output_iso --exclude='*.o' --exclude='*.so' \
	--exclude='*.bc' -cf - . | tar -C "$TREE" -xf -
cp -a "$TREE/src" "$PRISTINE/src"

# PG_CFLAGS without -Werror: a mutant that leaves a variable unused builds
build() {
	make -C "$TREE" -s -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" \
		PG_CFLAGS=-Wno-unused-parameter "$@" >"$WORK/build.log" 2>&1 </dev/null
}
sf_say "building the unmutated tree"
build || { cat "$WORK/build.log"; sf_die "the unmutated tree does not build"; }
sf_say "installing into a private copy of the PostgreSQL tree in $WORK/pg"
(SF_ROOT=$TREE sf_private_tree "$WORK/pg") || sf_die "private install failed"
PRIVBIN=$WORK/pg$PGBIN
install_build() {
	make -C "$TREE" -s PG_CONFIG="$PG_CONFIG" PG_CFLAGS=-Wno-unused-parameter \
		DESTDIR="$WORK/pg" install >>"$WORK/build.log" 2>&1 </dev/null
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

# The tests a pg_regress log reports as failed, comma-separated
failed_tests() {
	grep -E '\.\.\. FAILED' "$1" | sed -E 's/^ *(test +)?([^ ]+) .*/\2/' | paste -sd, -
}

# Run the suites; print the first that failed ("regress", "isolation",
# "tap:<file>", with "(timeout)" for a hang), or nothing if all passed.
run_suites() {
	local rc
	run_as_server rm -rf "$TREE/tmp_regress" "$TREE/tmp_iso" "$TREE/results" \
		"$TREE/output_iso" "$TREE/tmp_check"
	run_as_server timeout "$TIMEOUT" "$PGXS_DIR/src/test/regress/pg_regress" \
		--bindir="$PRIVBIN" --no-locale --encoding=UTF8 \
		--temp-instance="$TREE/tmp_regress" "${REGRESS_OPTS[@]}" \
		"${REGRESS_TESTS[@]}" >"$WORK/regress.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		[ $rc -eq 124 ] && echo "regress(timeout)" ||
			echo "regress:$(failed_tests "$WORK/regress.log")"
		return
	fi
	run_as_server timeout "$TIMEOUT" "$PGXS_DIR/src/test/isolation/pg_isolation_regress" \
		--bindir="$PRIVBIN" --no-locale --encoding=UTF8 \
		--temp-instance="$TREE/tmp_iso" --outputdir=output_iso "${ISO_OPTS[@]}" \
		"${ISO_TESTS[@]}" >"$WORK/isolation.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		[ $rc -eq 124 ] && echo "isolation(timeout)" ||
			echo "isolation:$(failed_tests "$WORK/isolation.log")"
		return
	fi
	[ "$WITH_TAP" -eq 1 ] || return
	local t
	run_as_server mkdir -p "$TREE/tmp_check"
	for t in "${TAP_TESTS[@]}"; do
		run_as_server env TESTDIR="$TREE" PATH="$PRIVBIN:$TREE:$PATH" PGPORT=65432 \
			PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
			PERL5LIB="$PGXS_DIR/src/test/perl:$TREE${PERL5LIB:+:$PERL5LIB}" \
			timeout "$TIMEOUT" prove -I "$PGXS_DIR/src/test/perl/" -I "$TREE" "$t" \
			>"$WORK/tap.log" 2>&1
		rc=$?
		if [ $rc -ne 0 ]; then
			[ $rc -eq 124 ] && echo "tap:$(basename "$t")(timeout)" || echo "tap:$(basename "$t")"
			return
		fi
	done
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

sf_say "running the unmutated tree (regress, isolation$([ $WITH_TAP -eq 1 ] && echo ', tap'))"
start=$(date +%s)
base=$(run_suites)
if [ -n "$base" ]; then
	sf_say "the unmutated tree fails $base; logs in $WORK"
	KEEP=1
	exit 2
fi
sf_say "unmutated tree passes ($(($(date +%s) - start)) s per run)"

declare -a table=()
caught=0
survived=0
counted=0
stale=0
eq_caught=0
eq_total=0
# the list is read on fd 3: nothing the loop runs can consume it
while IFS=$'\t' read -r -u 3 id file pattern replacement what; do
	case "$id" in '' | '#'*) continue ;; esac
	[ -n "$ONLY" ] && [[ "$ONLY" != *",$id,"* ]] && continue
	equivalent=0
	[[ "$what" == equivalent:* ]] && equivalent=1
	restore_sources
	apply_mutant "$file" "$pattern" "$replacement"
	rc=$?
	if [ $rc -ne 0 ]; then
		result="stale"
		stale=$((stale + 1))
	elif ! build; then
		result="stillborn"
	else
		install_build || sf_die "install of mutant $id failed"
		t0=$(date +%s)
		failed_by=$(run_suites)
		if [ -n "$failed_by" ]; then
			result="caught by $failed_by"
		else
			result="SURVIVED"
		fi
		result="$result ($(($(date +%s) - t0)) s)"
	fi
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
done 3<"$LIST"
restore_sources

echo
sf_say "mutation campaign: $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), suites: regress, isolation$([ $WITH_TAP -eq 1 ] && echo ', tap')"
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
