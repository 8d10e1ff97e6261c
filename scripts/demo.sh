#!/usr/bin/env bash
# scripts/demo.sh: build and install streamforge, start a throwaway
# PostgreSQL 15 cluster that belongs to this checkout, and run
# examples/demo.sql in it.
#
#   ./scripts/demo.sh          build, install, (re)use the cluster, run the demo
#   ./scripts/demo.sh psql     open psql on the demo database
#   ./scripts/demo.sh stop     stop the throwaway cluster and delete it
#
# It prints what it does; the output of apt-get, the compiler and make
# install goes to .demo.log in the checkout, which a failure names (with its
# last lines).
#
# The cluster lives in .demo/ inside the checkout.  If the server user
# ("postgres" when run as root) cannot reach the checkout -- a checkout under
# /root, mode 700, is the usual case -- it lives in
# /var/tmp/streamforge-demo-<checksum of the checkout path> instead.  It
# listens on a Unix socket in its own directory only (no TCP), so it never
# collides with a system cluster, which is never touched.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEMO_DB=streamforge_demo
DEMO_PORT=5432					# names the socket file only: no TCP listener
unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE

local_dir="$SF_ROOT/.demo"
fallback_dir="/var/tmp/streamforge-demo-$(sf_checkout_tag)"

# Pick (and create) the directory of the cluster; prints it.
demo_dir() {
	local d=$local_dir
	# a Unix socket path must stay below 108 bytes
	if [ ${#d} -le 80 ]; then
		mkdir -p "$d"
		sf_is_root && chown postgres:postgres "$d"
		chmod 700 "$d"
		if sf_as_server test -w "$d" -a -x "$d"; then
			echo "$d"
			return
		fi
		rmdir "$d" 2>/dev/null || true
	fi
	d=$fallback_dir
	[ -L "$d" ] && sf_die "$d is a symbolic link; remove it"
	mkdir -p "$d"
	sf_is_root && chown postgres:postgres "$d"
	chmod 700 "$d"
	echo "$d"
}

# The directory of an existing cluster, if any.
existing_dir() {
	local d
	for d in "$local_dir" "$fallback_dir"; do
		if [ -d "$d" ] && [ ! -L "$d" ]; then
			echo "$d"
			return
		fi
	done
	return 1
}

psql_cmd() {
	"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$1/run" -p "$DEMO_PORT" -U postgres "${@:2}"
}

init_cluster() {
	local d=$1
	sf_say "initialising a throwaway cluster in $d/data"
	sf_as_server rm -rf "$d/data" "$d/run"
	sf_as_server mkdir -m 700 "$d/run"
	sf_as_server "$PGBIN/initdb" -D "$d/data" -U postgres -A trust \
		--locale=C --encoding=UTF8 >"$d/initdb.log" 2>&1 ||
		{ cat "$d/initdb.log"; sf_die "initdb failed"; }
	sf_as_server tee -a "$d/data/postgresql.conf" >/dev/null <<EOF

# streamforge demo: Unix socket only, in a private directory
listen_addresses = ''
port = $DEMO_PORT
unix_socket_directories = '$d/run'
unix_socket_permissions = 0700
EOF
}

start_cluster() {
	local d=$1
	if [ ! -f "$d/data/PG_VERSION" ] || [ "$(cat "$d/data/PG_VERSION")" != "$PG_MAJOR" ]; then
		init_cluster "$d"
	fi
	if sf_as_server "$PGBIN/pg_ctl" -D "$d/data" status >/dev/null 2>&1; then
		sf_say "reusing the running demo cluster in $d/data"
		return
	fi
	sf_say "starting the demo cluster (socket directory $d/run)"
	if ! sf_as_server "$PGBIN/pg_ctl" -D "$d/data" -l "$d/server.log" -w start >/dev/null; then
		tail -n 20 "$d/server.log" 2>/dev/null || true
		sf_say "could not start the old cluster; recreating it"
		init_cluster "$d"
		sf_as_server "$PGBIN/pg_ctl" -D "$d/data" -l "$d/server.log" -w start >/dev/null ||
			{ tail -n 20 "$d/server.log"; sf_die "could not start the demo cluster"; }
	fi
}

stop_cluster() {
	local d
	d=$(existing_dir) || { sf_say "no demo cluster to stop"; return 0; }
	if [ -f "$d/data/PG_VERSION" ] &&
		sf_as_server "$PGBIN/pg_ctl" -D "$d/data" status >/dev/null 2>&1; then
		sf_say "stopping the demo cluster in $d/data"
		sf_as_server "$PGBIN/pg_ctl" -D "$d/data" -m fast -w stop >/dev/null
	fi
	sf_say "removing $d"
	rm -rf "$d"
	[ -d "$local_dir" ] && rm -rf "$local_dir"
	return 0
}

run_demo() {
	SF_LOG="$SF_ROOT/.demo.log"
	: >"$SF_LOG" || sf_die "cannot write $SF_LOG (is the checkout writable?)"
	sf_say "checking the Debian packages it needs: ${SF_BUILD_PACKAGES[*]}"
	sf_need_packages "${SF_BUILD_PACKAGES[@]}"
	sf_check_server_user
	sf_build_and_install || exit 1

	local d
	d=$(demo_dir)
	start_cluster "$d"

	sf_say "creating database $DEMO_DB and the extension"
	psql_cmd "$d" -d postgres -c "SET client_min_messages TO warning" \
		-c "DROP DATABASE IF EXISTS $DEMO_DB WITH (FORCE)" \
		-c "CREATE DATABASE $DEMO_DB"
	psql_cmd "$d" -d "$DEMO_DB" -c "CREATE EXTENSION $(sf_make_var "$SF_ROOT" EXTENSION)"

	sf_say "running examples/demo.sql"
	echo
	# from standard input, so that notices are not prefixed with the path
	psql_cmd "$d" -d "$DEMO_DB" <"$SF_ROOT/examples/demo.sql"
	echo
	sf_say "done: the demo cluster keeps running in $d"
	cat <<EOF

What to try next
  ./scripts/demo.sh psql      psql on the demo database; try
                                INSERT INTO demo_clicks (page, clicked_at)
                                    VALUES ('/docs', '2026-12-01 12:03:30+00');
                                SELECT * FROM clicks_per_minute;
                                SELECT * FROM clicks_per_minute_live;
                                SELECT * FROM streamforge.visible('demo');
                              (or: psql -h $d/run -p $DEMO_PORT -U postgres $DEMO_DB)
  docs/demo.md                what the output above shows, step by step
  README.md                   the example, the guarantees and where each doc is;
                              docs/sql-aggregates.md for aggregates over your tables
  docs/semantics.md           what windows, watermarks, lateness and the changes mean
  ./scripts/demo.sh stop      stop the throwaway cluster and delete it
EOF
}

case "${1:-run}" in
	run)
		run_demo
		;;
	psql)
		d=$(existing_dir) || sf_die "no demo cluster; run ./scripts/demo.sh first"
		exec "$PGBIN/psql" -X -h "$d/run" -p "$DEMO_PORT" -U postgres "$DEMO_DB"
		;;
	stop)
		stop_cluster
		rm -f "$SF_ROOT/.demo.log"
		;;
	*)
		echo "usage: $0 [run|psql|stop]" >&2
		exit 2
		;;
esac
