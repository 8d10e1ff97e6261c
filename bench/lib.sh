# bench/lib.sh: the throwaway cluster a benchmark runs on, sourced after
# scripts/lib.sh.  One copy of what each benchmark used to write out: a
# scratch directory, a private copy of the PostgreSQL tree with this build
# installed into it (sf_private_tree: nobody else's install changes the code
# under test), a cluster listening on a Unix socket there only, run as the
# server user, and an exit trap that stops it and removes the directory
# (kept with --keep, or when the script failed).
#
#   bench_scratch NAME [DIR]
#                           SCRATCH (DIR/streamforge-NAME.XXXXXX, DIR
#                           /tmp by default), SRVBIN, the private tree, the
#                           exit trap
#   bench_initdb [CONF...]  initdb; each CONF is a line for postgresql.conf,
#                           after the socket's own lines
#   bench_conf              appends standard input (a here-document) to
#                           postgresql.conf
#   bench_start             pg_ctl start; bench_stop stops it
#   as_server CMD...        CMD as the server user, from SCRATCH
#   psql_db ARGS...         psql as postgres on DB (default postgres),
#                           ON_ERROR_STOP, quiet
#   psql_val SQL            the value SQL returns, unaligned
#
# The caller sets PORT (the socket's number: no TCP listener) and may set
# KEEP, DB, and define bench_on_exit (run by the trap before the cluster
# stops, with the exit status in $1).

bench_started=

as_server() { SF_RUN_DIR=$SCRATCH sf_as_server "$@"; }
psql_db() {
	as_server "$SRVBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" \
		-U postgres -d "${DB:-postgres}" "$@"
}
psql_val() { psql_db -At -c "$1"; }

bench_stop() {
	if [ -n "$bench_started" ]; then
		as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -m fast -w stop >/dev/null 2>&1 || true
		bench_started=
	fi
}

bench_exit() {
	local rc=$?
	if declare -F bench_on_exit >/dev/null; then
		bench_on_exit "$rc" || true
	fi
	bench_stop
	if [ -n "${KEEP:-}" ] || [ "$rc" -ne 0 ]; then
		echo "scratch directory kept: $SCRATCH"
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}

bench_scratch() {
	SCRATCH=$(mktemp -d "${2:-/tmp}/streamforge-$1.XXXXXX")
	chmod 755 "$SCRATCH"
	SRVBIN=$SCRATCH/pg$PGBIN
	trap bench_exit EXIT
	trap 'exit 130' INT TERM
	sf_private_tree "$SCRATCH/pg"
	if sf_is_root; then
		chown -R postgres:postgres "$SCRATCH"
	fi
}

bench_initdb() {
	as_server "$SRVBIN/initdb" -D "$SCRATCH/data" -U postgres -A trust \
		--locale=C --encoding=UTF8 >"$SCRATCH/initdb.log" 2>&1 ||
		{ cat "$SCRATCH/initdb.log"; sf_die "initdb failed"; }
	{
		printf '\n# streamforge benchmark: a Unix socket in the scratch directory only\n'
		printf '%s\n' "listen_addresses = ''" "port = $PORT" \
			"unix_socket_directories = '$SCRATCH'" "unix_socket_permissions = 0700"
		[ $# -eq 0 ] || printf '%s\n' "$@"
	} | as_server tee -a "$SCRATCH/data/postgresql.conf" >/dev/null
}

bench_conf() {
	as_server tee -a "$SCRATCH/data/postgresql.conf" >/dev/null
}

bench_start() {
	as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -l "$SCRATCH/server.log" -w start >/dev/null ||
		{ tail -n 20 "$SCRATCH/server.log"; sf_die "could not start the cluster"; }
	bench_started=1
}
