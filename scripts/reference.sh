#!/usr/bin/env bash
# scripts/reference.sh: regenerate the generated part of docs/reference.md
# (functions, types, views and tables with their comments) from the catalog
# of an installed streamforge (issue 45).
#
#   ./scripts/reference.sh            use the demo cluster (./scripts/demo.sh),
#                                     or, without one, the server of the
#                                     usual PG* environment variables
#   ./scripts/reference.sh --check    print the differences, exit 1 if any
#
# It creates a throwaway database (streamforge_reference), creates the
# extension as installed (make install first), runs scripts/reference.sql
# and replaces the lines of docs/reference.md from the "reference:
# generated" marker to the "reference: end" marker with its output.
# It refuses when a function of the schema streamforge has no comment,
# naming it: add one to sql/objects/98_comments.sql.  test/t/080_docs.pl
# runs the same query and fails when docs/reference.md differs.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

check=0
[ "${1:-}" = --check ] && check=1

args=()
for d in "$SF_ROOT/.demo" "/var/tmp/streamforge-demo-$(sf_checkout_tag)"; do
	if [ -S "$d/run/.s.PGSQL.5432" ]; then
		args=(-h "$d/run" -p 5432 -U postgres)
		break
	fi
done
psql_ref() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "${args[@]}" "$@"; }

db=streamforge_reference
psql_ref -d postgres -c "SET client_min_messages TO warning" \
	-c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
trap 'psql_ref -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true' EXIT
psql_ref -d "$db" -c "CREATE EXTENSION streamforge"

missing=$(psql_ref -d "$db" -A -t -c "SELECT string_agg(p.oid::regprocedure::text, ', ' ORDER BY 1)
  FROM pg_proc AS p
 WHERE p.pronamespace = 'streamforge'::regnamespace
   AND obj_description(p.oid, 'pg_proc') IS NULL")
[ -z "$missing" ] || sf_die "functions without a comment (add them to sql/objects/98_comments.sql): $missing"

gen=$(mktemp)
trap 'rm -f "$gen"; psql_ref -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true' EXIT
psql_ref -d "$db" -A -t -f "$SF_ROOT/scripts/reference.sql" >"$gen"

out=$(mktemp)
perl -e '
	my ($gen, $doc) = @ARGV;
	open my $g, "<", $gen or die "$gen: $!"; my $new = do { local $/; <$g> };
	open my $d, "<", $doc or die "$doc: $!"; my $text = do { local $/; <$d> };
	$new =~ s/\n+\z//;
	$text =~ s/^<!-- reference: generated .*?^<!-- reference: end of the generated part -->$/$new/ms
	  or die "$doc: no \"reference: generated\" ... \"reference: end\" markers\n";
	print $text;' "$gen" "$SF_ROOT/docs/reference.md" >"$out"
if [ $check = 1 ]; then
	if diff -u "$SF_ROOT/docs/reference.md" "$out"; then
		rm -f "$out"
		sf_say "docs/reference.md is up to date"
		exit 0
	fi
	rm -f "$out"
	exit 1
fi
mv "$out" "$SF_ROOT/docs/reference.md"
sf_say "docs/reference.md rewritten from the catalog"
