#!/usr/bin/env bash
# test/run.d/proxy-gen.sh: proxy/gen.pl's refusals and its window kinds
# (docs/scale-out.md, "What is routed, and how to add a function"; issue
# 41, item 1).  On copies of the tree:
#   1. the tree as it is generates both router scripts;
#   2. a function of the data node without a line in proxy/api.tsv fails
#      the build, naming it (this check was silently dead after the split
#      of the SQL into sql/objects/: an autovivified hash emptied the list
#      of the node's functions);
#   3. a new window kind's constructor (bound to sf_window_ctor) and its
#      interval form get their router functions with no edit in proxy/:
#      the constructor builds its row in the router (kind window), the
#      interval form goes to any shard;
#   4. a constructor whose arguments are not columns of window_def fails
#      the build, naming the argument.
# Usage: test/run.d/proxy-gen.sh   (from the top directory, or SF_ROOT)
set -euo pipefail
root=${SF_ROOT:-$(pwd)}
fail=0
bad() { echo "proxy-gen: $*"; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

copy() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t"
	cp -r "$root/proxy" "$root/sql" "$tmp/t/"
}
gen() { (cd "$tmp/t" && perl proxy/gen.pl "$@" proxy/streamforge_proxy--0.4.0.sql.in); }

# 1.
copy
gen >"$tmp/out.sql" 2>"$tmp/err" || bad "the tree does not generate: $(cat "$tmp/err")"
(cd "$tmp/t" && perl proxy/gen.pl --replace proxy/streamforge_proxy--0.3.0--0.4.0.sql.in) \
	>/dev/null 2>"$tmp/err" || bad "the update script does not generate: $(cat "$tmp/err")"
grep -q "^CREATE FUNCTION streamforge.fixed(name text, size bigint)" "$tmp/out.sql" ||
	bad "no generated streamforge.fixed(name text, size bigint)"
if grep -qi "px_check_window" "$tmp/out.sql"; then
	bad "the router still checks windows itself (px_check_window)"
fi

# 2.
copy
grep -q "^tick[[:space:]]" "$tmp/t/proxy/api.tsv" || bad "proxy/api.tsv has no line for tick (pick another)"
sed -i '/^tick[[:space:]]/d' "$tmp/t/proxy/api.tsv"
if gen >/dev/null 2>"$tmp/err"; then
	bad "a function without a line in proxy/api.tsv (tick) does not fail the build"
elif ! grep -q "without a line in proxy/api.tsv.*: tick$" "$tmp/err"; then
	bad "the failure does not name tick: $(cat "$tmp/err")"
fi

# 3.
copy
cat >>"$tmp/t/sql/objects/30_functions.sql" <<'EOF'

CREATE OR REPLACE FUNCTION streamforge.cumulative(name text, size bigint, step bigint)
RETURNS streamforge.window_def
AS 'MODULE_PATHNAME', 'sf_window_ctor'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION streamforge.cumulative_interval(name text, size interval, step interval)
RETURNS streamforge.window_def
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN NULL;
END
$$;
EOF
if ! gen >"$tmp/out.sql" 2>"$tmp/err"; then
	bad "a new window kind needs an edit in proxy/: $(cat "$tmp/err")"
else
	grep -q "^AS \$\$ SELECT ROW(\$1, 'cumulative', \$2, \$3, NULL)::streamforge.window_def \$\$;" "$tmp/out.sql" ||
		bad "the new kind's constructor does not build its row in the router"
	grep -q "^CREATE FUNCTION streamforge.px_cumulative_interval(" "$tmp/out.sql" ||
		bad "the new kind's interval form is not routed to any shard"
fi

# 4.
sed -i 's/cumulative(name text, size bigint, step bigint)/cumulative(name text, size bigint, width bigint)/' \
	"$tmp/t/sql/objects/30_functions.sql"
if gen >/dev/null 2>"$tmp/err"; then
	bad "a constructor taking width (not a column of window_def) does not fail the build"
elif ! grep -q "cumulative: its argument width is not a column of streamforge.window_def" "$tmp/err"; then
	bad "the failure does not name the argument: $(cat "$tmp/err")"
fi

[ "$fail" -eq 0 ] && echo "proxy-gen: the scripts generate; a function without a line fails; a new window kind needs no edit in proxy/"
exit "$fail"
