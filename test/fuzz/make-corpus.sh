#!/usr/bin/env bash
# test/fuzz/make-corpus.sh: regenerate the seed corpora of the journal and
# snapshot fuzz targets (test/fuzz/corpus/journal/, corpus/snapshot/) from
# real journal rows and stored snapshots: builds and installs the
# extension into a private copy of the PostgreSQL tree in a scratch
# directory (scripts/lib.sh, sf_private_tree), runs test/fuzz/corpus.sql
# on a scratch server there and writes one file per seed.  The files are
# committed; run this after a change of the journal or snapshot format.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE

sf_check_server_user
work=$(mktemp -d /tmp/streamforge-corpus.XXXXXX)
data=$work/data
stop() {
	[ -f "$data/postmaster.pid" ] &&
		sf_as_server "$work/pg$PGBIN/pg_ctl" stop -D "$data" -m fast -w >/dev/null 2>&1
	rm -rf "$work"
}
trap stop EXIT

make -C "$SF_ROOT" -s PG_CONFIG="$PG_CONFIG" >/dev/null
sf_private_tree "$work/pg"
sf_is_root && chown -R postgres:postgres "$work"
sf_as_server "$work/pg$PGBIN/initdb" -D "$data" -A trust -U postgres --no-locale \
	-E UTF8 >/dev/null
sf_as_server "$work/pg$PGBIN/pg_ctl" start -D "$data" -w -l "$work/log" \
	-o "-c listen_addresses= -k $work -c port=5499" >/dev/null
sf_as_server "$work/pg$PGBIN/psql" -X -q -At -h "$work" -p 5499 -U postgres \
	-d postgres -f - <"$SF_ROOT/test/fuzz/corpus.sql" >"$work/out"
while IFS='|' read -r target name hex; do
	case "$target" in journal | snapshot) ;; *) continue ;; esac
	mkdir -p "$SF_ROOT/test/fuzz/corpus/$target"
	printf '%s' "$hex" | xxd -r -p >"$SF_ROOT/test/fuzz/corpus/$target/$name.bin"
	echo "test/fuzz/corpus/$target/$name.bin: $((${#hex} / 2)) bytes"
done <"$work/out"
