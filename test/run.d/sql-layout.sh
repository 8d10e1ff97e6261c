#!/usr/bin/env bash
# test/run.d/sql-layout.sh: the layout of the extension's SQL (src/README.md,
# "Where SQL goes").  sql/build.sh makes the install script of sql/schema/
# and sql/objects/, and every update script of the guard, sql/migrations/
# and sql/objects/ again: so objects/ must be the current state, written to
# run twice, and schema/ storage only.  Fails on
#   - in sql/objects/: CREATE TABLE, TYPE, SEQUENCE, INDEX or SCHEMA, ALTER
#     TABLE, a CREATE FUNCTION, PROCEDURE, VIEW or TRIGGER without OR
#     REPLACE, a CREATE POLICY not preceded by its DROP POLICY IF EXISTS,
#     DROP FUNCTION, DROP VIEW, or a function defined twice (same name and
#     argument list);
#   - in sql/schema/: a function, procedure, view, trigger or policy;
#   - no sql/migrations/<version>.sql for the control file's version;
#   - a control file whose module_pathname is not '$libdir/streamforge'
#     (the frozen update scripts bind to it: the compat library), or no
#     compat fixture (test/fixtures/streamforge-0.3.0.tar.gz, which the
#     Makefile builds it from);
#   - a MODULE_PATHNAME left in a generated script (the build binds every C
#     function to streamforge-<version>), when the scripts are built.
# Statements are matched at the start of a line (the files' style); the
# text inside function bodies is indented or quoted.
# Usage: test/run.d/sql-layout.sh   (from the top directory, or SF_ROOT)
set -euo pipefail
root=${SF_ROOT:-$(pwd)}
fail=0
bad() { echo "sql-layout: $*"; fail=1; }

shopt -s nullglob
objects=("$root"/sql/objects/*.sql)
schema=("$root"/sql/schema/*.sql)
[ ${#objects[@]} -gt 0 ] || bad "no sql/objects/*.sql"
[ ${#schema[@]} -gt 0 ] || bad "no sql/schema/*.sql"

# grep -n with the file's name relative to the top
find_in() {
	local re=$1
	shift
	[ $# -gt 0 ] || return 0
	grep -nHiE "$re" "$@" | sed "s|^$root/||" || true
}

if [ ${#objects[@]} -gt 0 ]; then
	while IFS= read -r l; do
		[ -n "$l" ] && bad "storage in sql/objects/ (it belongs in sql/schema/ and sql/migrations/): $l"
	done < <(find_in '^(CREATE +(UNIQUE +)?(TABLE|TYPE|SEQUENCE|INDEX|SCHEMA)|ALTER +(TABLE|TYPE|SEQUENCE))\b' "${objects[@]}")
	while IFS= read -r l; do
		[ -n "$l" ] && bad "CREATE without OR REPLACE in sql/objects/ (every update runs it again): $l"
	done < <(find_in '^CREATE +(FUNCTION|PROCEDURE|VIEW|TRIGGER)\b' "${objects[@]}")
	while IFS= read -r l; do
		[ -n "$l" ] && bad "DROP in sql/objects/ (a changed signature or view is dropped in sql/migrations/<version>.sql): $l"
	done < <(find_in '^DROP +(FUNCTION|PROCEDURE|VIEW)\b' "${objects[@]}")
	# a policy: DROP POLICY IF EXISTS name ON table; right before CREATE POLICY name ON table
	while IFS= read -r l; do
		[ -n "$l" ] && bad "CREATE POLICY without DROP POLICY IF EXISTS on the line before: $l"
	done < <(awk '
		toupper($0) ~ /^CREATE +POLICY / {
			n = $3; t = $5
			if (toupper(prev) !~ /^DROP +POLICY +IF +EXISTS / || index(prev, " " n " ON " t ";") == 0)
				print FILENAME ":" FNR ": " $0
		}
		{ prev = $0 }' "${objects[@]}" | sed "s|^$root/||")
	# each function once: name and argument list up to the closing parenthesis
	while IFS= read -r l; do
		[ -n "$l" ] && bad "defined twice in sql/objects/ (keep the current definition only): $l"
	done < <(perl -0777 -ne '
		s/--[^\n]*//g;
		while (/^CREATE\s+OR\s+REPLACE\s+(?:FUNCTION|PROCEDURE)\s+([\w.]+)\s*\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)/mgi) {
			my ($n, $a) = (lc $1, $2);
			my @types = map { s/^\s+|\s+$//gr } split /,(?![^(]*\))/, $a;
			@types = map { s/\s+DEFAULT\s+.*$//isr =~ s/^(?:IN|INOUT|VARIADIC)\s+//ir } grep { !/^OUT\s/i } @types;
			@types = map { my @w = split /\s+/; @w > 1 ? join(" ", @w[1..$#w]) : $w[0] } @types;
			my $sig = "$n(" . join(", ", map { lc s/\s+/ /gr } @types) . ")";
			print "$sig\n" if $seen{$sig}++;
		}' "${objects[@]}")
fi

if [ ${#schema[@]} -gt 0 ]; then
	while IFS= read -r l; do
		[ -n "$l" ] && bad "not storage in sql/schema/ (it belongs in sql/objects/): $l"
	done < <(find_in '^CREATE +(OR +REPLACE +)?(FUNCTION|PROCEDURE|VIEW|TRIGGER|POLICY)\b' "${schema[@]}")
fi

ctl=$root/streamforge.control
version=$(sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" "$ctl")
[ -n "$version" ] || bad "no default_version in streamforge.control"
[ -z "$version" ] || [ -f "$root/sql/migrations/$version.sql" ] ||
	bad "no sql/migrations/$version.sql (what $version changes since the previous release; it may be empty)"
grep -qx "module_pathname = '\$libdir/streamforge'" "$ctl" ||
	bad "streamforge.control: module_pathname must stay '\$libdir/streamforge' (the frozen update scripts and the compat library)"
[ -f "$root/test/fixtures/streamforge-0.3.0.tar.gz" ] ||
	bad "no test/fixtures/streamforge-0.3.0.tar.gz (the compat library is built from it)"

for f in "$root"/streamforge--*.sql; do
	if grep -q MODULE_PATHNAME "$f"; then
		bad "${f#"$root"/} binds functions to MODULE_PATHNAME (sql/build.sh -l streamforge-$version)"
	fi
done

[ "$fail" -eq 0 ] && echo "sql-layout: sql/schema/, sql/objects/ and sql/migrations/ keep their rules ($version)"
exit "$fail"
