#!/usr/bin/env bash
# scripts/format.sh: format the C sources in PostgreSQL's style.
#
#   ./scripts/format.sh [FILE...]          format FILEs (default: src/*/*.c src/*/*.h)
#   ./scripts/format.sh --check [FILE...]  show what would change; exit 1 if anything would
#   ./scripts/format.sh --typedefs         regenerate src/typedefs.list from src/
#
# Uses pgindent when it is on PATH (or PGINDENT names it), with
# src/typedefs.list plus PostgreSQL's own typedefs.list if PG_TYPEDEFS names
# it.  Debian packages no pgindent, so otherwise it falls back to
# clang-format with the repository's .clang-format, an approximation of
# pgindent (see the comment at the top of that file).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# Typedef names declared in our sources: "} Name;" closing a typedef'd
# struct/enum/union, one-line "typedef ... Name;", function pointer
# typedefs, and the types simplehash.h declares for each SH_PREFIX.
list_typedefs() {
	local files=(src/*/*.c src/*/*.h)
	{
		sed -n -E 's/^\}[[:space:]]*([A-Za-z_][A-Za-z0-9_]*);.*/\1/p' "${files[@]}"
		sed -n -E 's/^typedef[[:space:]][^;({]*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*;.*/\1/p' "${files[@]}"
		sed -n -E 's/^typedef[^;]*\([[:space:]]*\*[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\).*/\1/p' "${files[@]}"
		sed -n -E 's/^#define[[:space:]]+SH_PREFIX[[:space:]]+([A-Za-z_][A-Za-z0-9_]*).*/\1_hash\n\1_iterator/p' "${files[@]}"
	} | LC_ALL=C sort -u
}

mode=format
case "${1:-}" in
	--check) mode=check; shift ;;
	--typedefs) list_typedefs >src/typedefs.list; echo "src/typedefs.list: $(wc -l <src/typedefs.list) names"; exit 0 ;;
	-h|--help) sed -n '2,12p' "$0"; exit 0 ;;
esac

if [ $# -gt 0 ]; then
	files=("$@")
else
	files=(src/*/*.c src/*/*.h)
fi

# Warn about typedefs missing from the list: pgindent formats them wrongly.
missing=$(LC_ALL=C comm -23 <(list_typedefs) <(LC_ALL=C sort -u src/typedefs.list))
if [ -n "$missing" ]; then
	echo "note: typedefs not in src/typedefs.list (run $0 --typedefs):" "${missing//$'\n'/ }" >&2
fi

pgindent=${PGINDENT:-$(command -v pgindent || true)}
if [ -n "$pgindent" ]; then
	tool="pgindent ($pgindent)"
	typedefs=$(mktemp)
	trap 'rm -f "$typedefs"' EXIT
	cat src/typedefs.list ${PG_TYPEDEFS:+"$PG_TYPEDEFS"} | LC_ALL=C sort -u >"$typedefs"
	format_one() { "$pgindent" --typedefs="$typedefs" "$1"; }
elif command -v clang-format >/dev/null 2>&1; then
	tool="clang-format ($(clang-format --version | head -n 1)), approximating pgindent"
	format_one() { clang-format -i --style=file "$1"; }
else
	echo "neither pgindent nor clang-format found (apt-get install clang-format)" >&2
	exit 2
fi
echo "formatting with $tool" >&2

if [ "$mode" = format ]; then
	for f in "${files[@]}"; do
		format_one "$f"
	done
	exit 0
fi

# --check: format copies and compare
scratch=$(mktemp -d)
trap 'rm -rf "$scratch" ${typedefs:+"$typedefs"}' EXIT
cp .clang-format "$scratch/" 2>/dev/null || true
status=0
for f in "${files[@]}"; do
	copy="$scratch/$(basename "$f")"
	cp "$f" "$copy"
	(cd "$scratch" && format_one "$(basename "$f")")
	if ! diff -u "$f" "$copy"; then
		status=1
	fi
done
exit $status
