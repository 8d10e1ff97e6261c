#!/usr/bin/env bash
# test/run.d/fuzz.sh: build the fuzz targets of test/fuzz (libFuzzer, ASan,
# UBSan) and run each for a bounded time from its seed corpus in
# test/fuzz/corpus/<target>/:
#   checkpoint  canonical checkpoint bytes (fuzz_checkpoint.c), 60 s
#   journal     journal rows replayed on a pipeline (fuzz_journal.c), 10 s
#   snapshot    stored binary snapshots loaded (fuzz_snapshot.c), 10 s
#   parallel    a parallel pipeline's head and K entries decoded, a head
#               entry replayed, head and lane snapshots decoded, a
#               checkpoint split (fuzz_parallel.c), 10 s
#   kafka_json  a Kafka message read by the worker's JSON scan, against
#               PostgreSQL's JSON parser (fuzz_kafka_json.c), 10 s
# Every seed must pass first (SF_FUZZ_SEEDS_VALID), and so must every input
# of test/fuzz/regress/<target>/ (what a target once found: a crash or a
# broken invariant, fixed since).  Exit status non-zero
# on any crash, sanitizer report, or invariant failure reported by a target
# (see the head comment of each).  Runs from the repository's top
# directory; needs clang with compiler-rt, the PostgreSQL server headers
# and zlib.  docs/testing.md, "Fuzzing", says how to run them longer.
#
# Environment: SF_FUZZ_SECONDS (every target's time; default as above),
# SF_FUZZ_TARGETS (a space-separated selection; default all five),
# SF_FUZZ_KEEP (a directory: the grown corpora and any artifacts are left
# there), PG_CONFIG, CLANG (default clang).
set -euo pipefail

root=${SF_ROOT:-$(pwd)}
PG_CONFIG=${PG_CONFIG:-pg_config}
CLANG=${CLANG:-clang}
targets=${SF_FUZZ_TARGETS:-checkpoint journal snapshot parallel kafka_json}

if ! command -v "$CLANG" >/dev/null; then
	echo "fuzz.sh: $CLANG not found" >&2
	exit 1
fi

if [ -n "${SF_FUZZ_KEEP:-}" ]; then
	work=$SF_FUZZ_KEEP
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi

# The engine and the codec layers whole (src/engine, src/codec), without
# persistence and the SQL functions (SPI, fmgr; test/run.d/layers.sh keeps
# those out of these two folders): shim.c stands in for the backend
# functions they call.  Compiled once, linked into each target.
cflags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-fwrapv -fno-strict-aliasing -D_GNU_SOURCE -Wno-ignored-attributes
	-I"$root/src" -I"$root/test/fuzz" -I"$("$PG_CONFIG" --includedir-server)")
mkdir -p "$work/obj"
objs=()
for src in "$root"/src/engine/*.c "$root"/src/codec/*.c "$root/test/fuzz/shim.c"; do
	obj="$work/obj/$(basename "$(dirname "$src")")_$(basename "$src" .c).o"
	"$CLANG" "${cflags[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" -c -o "$obj" "$src"
	objs+=("$obj")
done

failed=()
for t in $targets; do
	bin=$work/fuzz_$t
	seeds=$root/test/fuzz/corpus/$t
	case "$t" in
	checkpoint) seconds=${SF_FUZZ_SECONDS:-60} max_len=16384 ;;
	journal) seconds=${SF_FUZZ_SECONDS:-10} max_len=4096 ;;
	snapshot) seconds=${SF_FUZZ_SECONDS:-10} max_len=8192 ;;
	parallel) seconds=${SF_FUZZ_SECONDS:-10} max_len=16384 ;;
	kafka_json) seconds=${SF_FUZZ_SECONDS:-10} max_len=4096 ;;
	*)
		echo "fuzz.sh: unknown target \"$t\"" >&2
		exit 1
		;;
	esac
	extra=()
	libs=()
	if [ "$t" = kafka_json ]; then
		# the worker's scan, and PostgreSQL's JSON parser as its reference
		# (the archive last: shim.c defines what else it holds)
		extra=(-I"$root/kafka/src" "$root/kafka/src/json.c")
		libs=("$("$PG_CONFIG" --pkglibdir)/libpgcommon.a")
	fi
	"$CLANG" "${cflags[@]}" -o "$bin" "$root/test/fuzz/fuzz_$t.c" "${extra[@]}" \
		"${objs[@]}" "${libs[@]}" -lz

	echo "fuzz.sh: $t: the seeds of test/fuzz/corpus/$t"
	if ! SF_FUZZ_SEEDS_VALID=1 "$bin" -artifact_prefix="$work/$t-" "$seeds"/* \
		>"$work/$t-seeds.log" 2>&1; then
		tail -n 25 "$work/$t-seeds.log"
		echo "fuzz.sh: $t: a seed failed" >&2
		failed+=("$t")
		continue
	fi

	# Inputs that once failed (test/fuzz/regress/<target>): each must pass
	if [ -d "$root/test/fuzz/regress/$t" ] &&
		! "$bin" -artifact_prefix="$work/$t-" "$root/test/fuzz/regress/$t"/* \
			>"$work/$t-regress.log" 2>&1; then
		grep -A4 "^fuzz_$t:" "$work/$t-regress.log" || tail -n 25 "$work/$t-regress.log"
		echo "fuzz.sh: $t: an input of test/fuzz/regress/$t failed again" >&2
		failed+=("$t")
		continue
	fi

	# The fuzzer adds what it finds to the first corpus directory: a copy.
	mkdir -p "$work/corpus-$t"
	cp "$seeds"/* "$work/corpus-$t/"
	echo "fuzz.sh: $t: ${seconds}s"
	set +e
	"$bin" -max_total_time="$seconds" -max_len="$max_len" \
		-rss_limit_mb=2048 -timeout=60 -print_final_stats=1 \
		-artifact_prefix="$work/$t-" "$work/corpus-$t" >"$work/$t.log" 2>&1
	status=$?
	set -e
	tail -n 8 "$work/$t.log"
	if [ "$status" -ne 0 ]; then
		grep -A4 "^fuzz_$t:" "$work/$t.log" || true
		for a in "$work/$t"-crash-* "$work/$t"-leak-* "$work/$t"-timeout-* "$work/$t"-oom-*; do
			[ -f "$a" ] && { echo "artifact $(basename "$a"):"; xxd "$a" | head -n 40; }
		done
		echo "fuzz.sh: $t: the fuzzer failed (status $status)" >&2
		failed+=("$t")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz.sh: failed: ${failed[*]}" >&2
	exit 1
fi
echo "fuzz.sh: $targets without a failure"
