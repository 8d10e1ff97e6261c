#!/usr/bin/env bash
# test/run.d/fuzz.sh: build the checkpoint fuzz target (libFuzzer, ASan,
# UBSan) and run it for at most 60 seconds from the seed corpus of real
# checkpoints in test/fuzz/corpus.  Exit status non-zero on any crash,
# sanitizer report, or invariant failure reported by the target (see
# test/fuzz/fuzz_checkpoint.c).  Runs from the repository's top directory;
# needs clang with compiler-rt, the PostgreSQL server headers and zlib.
#
# Environment: SF_FUZZ_SECONDS (default 60), PG_CONFIG, CLANG (default clang).
set -euo pipefail

root=${SF_ROOT:-$(pwd)}
PG_CONFIG=${PG_CONFIG:-pg_config}
CLANG=${CLANG:-clang}
seconds=${SF_FUZZ_SECONDS:-60}

if ! command -v "$CLANG" >/dev/null; then
	echo "fuzz.sh: $CLANG not found" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The engine and the codec layers whole (src/engine, src/codec), without
# persistence and the SQL functions (SPI, fmgr; test/run.d/layers.sh keeps
# those out of these two folders): shim.c stands in for the backend
# functions they call.
srcs=$(ls "$root"/src/engine/*.c "$root"/src/codec/*.c)
"$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fwrapv -fno-strict-aliasing -D_GNU_SOURCE -Wno-ignored-attributes \
	-I"$root/src" -I"$root/test/fuzz" -I"$("$PG_CONFIG" --includedir-server)" \
	-o "$work/fuzz_checkpoint" \
	"$root/test/fuzz/fuzz_checkpoint.c" "$root/test/fuzz/shim.c" $srcs -lz

# Every seed must be a valid checkpoint (else the fuzzer starts from noise).
SF_FUZZ_SEEDS_VALID=1 "$work/fuzz_checkpoint" -artifact_prefix="$work/" \
	"$root"/test/fuzz/corpus/* 2>&1 | tail -n 3

# The fuzzer adds what it finds to the first corpus directory: a copy.
mkdir "$work/corpus"
cp "$root"/test/fuzz/corpus/* "$work/corpus/"
"$work/fuzz_checkpoint" -max_total_time="$seconds" -max_len=16384 \
	-rss_limit_mb=2048 -timeout=60 -print_final_stats=1 \
	-artifact_prefix="$work/" "$work/corpus" 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
	for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -f "$a" ] && { echo "artifact $(basename "$a"):"; xxd "$a" | head -n 40; }
	done
	echo "fuzz.sh: the fuzzer failed (status $status)" >&2
	exit 1
fi
echo "fuzz.sh: ${seconds}s without a failure"
