#!/usr/bin/env bash
# test/run.d/memcheck-scan.sh: the classification of scripts/memcheck.sh
# (scripts/test.sh --valgrind, --asan) on made-up logs, so that a change
# to it cannot silently turn findings into passes.  Valgrind: an error with
# a frame in the extension's sources, or in its library (streamforge-<version>.so,
# or streamforge.so, the compat library), or a process
# killed by SIGSEGV is a finding; an error inside PostgreSQL alone is not.
# ASan: a report file, or a UBSan "runtime error:" line in a server log, is
# a finding.  Runs from the repository's top directory.
set -euo pipefail
root=${SF_ROOT:-$(pwd)}
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
# shellcheck source=scripts/memcheck.sh
. "$root/scripts/memcheck.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
cases=0
# expect NAME STATUS MODE LOGDIR: sf_mc_scan must return STATUS (0 or 1)
expect() {
	local name=$1 want=$2 got=0 out
	cases=$((cases + 1))
	out=$work/case$cases.out
	sf_mc_scan "$4" "$3" /build/streamforge "$work" >"$out" 2>&1 || got=1
	if [ "$got" -ne "$want" ]; then
		echo "memcheck-scan: $name: expected status $want, got $got:"
		cat "$out"
		fail=1
	fi
}

pg_only='==7== VALGRINDERROR-BEGIN
==7== Syscall param pwrite64(buf) points to uninitialised byte(s)
==7==    at 0x1: pwrite (pwrite64.c:25)
==7==    by 0x2: XLogFlush (in /x/bin/postgres.real)
==7==  Uninitialised value was created by a stack allocation
==7==    at 0x3: StartupXLOG (in /x/bin/postgres.real)
==7== VALGRINDERROR-END'

mkdir "$work/vg-clean"
printf '%s\n' "$pg_only" >"$work/vg-clean/7.log"
expect "valgrind, PostgreSQL alone" 0 valgrind "$work/vg-clean"

mkdir "$work/vg-src"
printf '%s\n' "$pg_only" >"$work/vg-src/7.log"
cat >"$work/vg-src/8.log" <<'LOG'
==8== VALGRINDERROR-BEGIN
==8== Invalid read of size 1
==8==    at 0x1: sf_persist_restore (/build/streamforge/src/persist.c:1883)
==8==    by 0x2: standard_ExecutorRun (in /x/bin/postgres.real)
==8== VALGRINDERROR-END
LOG
expect "valgrind, frame in src/" 1 valgrind "$work/vg-src"

mkdir "$work/vg-origin"
cat >"$work/vg-origin/9.log" <<'LOG'
==9== VALGRINDERROR-BEGIN
==9== Syscall param write(buf) points to uninitialised byte(s)
==9==    at 0x1: write (write.c:26)
==9==  Uninitialised value was created by a heap allocation
==9==    at 0x2: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==9==    by 0x3: palloc (in /x/bin/postgres.real)
==9==    by 0x4: ??? (in /x/lib/postgresql/streamforge.so)
==9== VALGRINDERROR-END
LOG
expect "valgrind, origin in streamforge.so" 1 valgrind "$work/vg-origin"

mkdir "$work/vg-origin-versioned"
sed 's|/streamforge\.so|/streamforge-0.4.0.so|' "$work/vg-origin/9.log" >"$work/vg-origin-versioned/9.log"
expect "valgrind, origin in streamforge-0.4.0.so" 1 valgrind "$work/vg-origin-versioned"

mkdir "$work/vg-segv"
printf '%s\n' '==10== Process terminating with default action of signal 11 (SIGSEGV)' \
	'==10==  Access not within mapped region at address 0x0' >"$work/vg-segv/10.log"
expect "valgrind, SIGSEGV" 1 valgrind "$work/vg-segv"

mkdir -p "$work/asan-clean" "$work/log"
echo "LOG:  database system is ready to accept connections" >"$work/log/postmaster.log"
expect "asan, nothing" 0 asan "$work/asan-clean"

mkdir "$work/asan-report"
echo "==11==ERROR: AddressSanitizer: heap-use-after-free on address 0x1" >"$work/asan-report/asan.11"
expect "asan, report file" 1 asan "$work/asan-report"

echo "src/sf_sql.c:920:22: runtime error: shift exponent 40 is too large for 32-bit type 'int'" \
	>>"$work/log/postmaster.log"
expect "asan, UBSan line in a server log" 1 asan "$work/asan-clean"

[ "$fail" -eq 0 ] && echo "memcheck-scan: $cases cases classified as expected"
exit "$fail"
