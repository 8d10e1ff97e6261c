#!/usr/bin/env bash
# bench/redefine.sh: how long a definition change holds the pipeline's lock,
# and what a cold load costs after it (issues 21 and 39).  Not part of the
# test suite.
#
#   ./bench/redefine.sh [--events N] [--concurrently on|off] [--out FILE] [--keep]
#
# Builds the extension into a private copy of the PostgreSQL tree in a
# scratch directory (as bench/perrow.sh does), starts a throwaway cluster on
# a Unix socket there, ingests N events (default 1,000,000; 4 partitions,
# 1,000 keys, event times roughly in order; windows fixed(60),
# sliding(300, 60) and session(30), lateness 100) into one pipeline,
# advances it so that old buckets are finalized, and then times, one
# transaction each, a series of definition changes: add_partition,
# add_window (fixed 600, backfilled), set_lateness (raise, then lower),
# set_retention, set_emit and drop_window.  For each it prints the time of
# the call and its commit in a session that has the pipeline loaded, the
# longest time a probe session waited for the pipeline's row lock meanwhile
# (the lock every write call takes: what a writer waits), and the first
# read of a new session after it (a cold load of the stored snapshot).
# --concurrently sets streamforge.redefine_concurrently (default on: the
# change builds its state before it takes the lock, docs/management.md);
# --out appends the table to FILE.  --writer-ms MS adds a writer session
# that commits an advance() of partition p0 every MS ms during each change
# (each write bumps the pipeline's version: a change whose build takes
# longer than MS then builds under the lock).  Not validated yet: in its
# first runs (0.1M, a writer every 200 ms, load 20) the probe read 0 s for
# the changes after set_retention although those calls took 12-21 s;
# unexplained, so no figure of it is published.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
EVENTS=1000000
KEEP=
CONCURRENTLY=on
OUT=
WRITER_MS=
while [ $# -gt 0 ]; do
	case "$1" in
		--events) EVENTS=$2; shift ;;
		--keep) KEEP=1 ;;
		--concurrently) CONCURRENTLY=$2; shift ;;
		--out) OUT=$(realpath "$2"); shift ;;
		--writer-ms) WRITER_MS=$2; shift ;;
		*) echo "usage: $0 [--events N] [--concurrently on|off] [--writer-ms MS] [--out FILE] [--keep]" >&2; exit 2 ;;
	esac
	shift
done
PORT=5435						# names the socket file only: no TCP listener

sf_check_server_user
command -v bc >/dev/null || sf_die "bc is needed"
sf_say "building"
make -C "$SF_ROOT" -s -j2 PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"

bench_scratch redefine
bench_initdb "shared_buffers = 512MB" "max_wal_size = 8GB" "autovacuum = off" \
	"streamforge.redefine_concurrently = $CONCURRENTLY"
bench_start

sf_say "ingesting $EVENTS events"
psql_db -c "CREATE EXTENSION streamforge" -c "
SELECT streamforge.create_pipeline('b', ARRAY['p0', 'p1', 'p2', 'p3'],
         ARRAY[streamforge.fixed('m', 60), streamforge.sliding('s', 300, 60),
               streamforge.session('v', 30)], 100)" >/dev/null
psql_db -c "
DO \$\$
DECLARE c bigint;
BEGIN
    FOR c IN 0 .. ($EVENTS - 1) / 100000 LOOP
        PERFORM pg_catalog.count(*) FROM streamforge.ingest_batch('b', ARRAY(
            SELECT ROW('p' || (i % 4), i / 4, 'e' || i, 'k' || (i * 7919 % 1000),
                       i / 100 + (i * 31 % 50), i % 97)::streamforge.delivery
              FROM pg_catalog.generate_series(c * 100000::bigint,
                       LEAST(c * 100000 + 99999, $EVENTS - 1)) AS i));
    END LOOP;
END \$\$" -c "
SELECT pg_catalog.count(*) FROM unnest(ARRAY['p0', 'p1', 'p2', 'p3']) AS p,
       LATERAL streamforge.advance('b', p, $EVENTS / 100)" >/dev/null

secs() { echo "$2 - $1" | bc -l; }
# time_cold: a new session's first read of the pipeline
time_cold() {
	local t0 t1
	t0=$(date +%s.%N)
	psql_db -c "SELECT streamforge.watermark('b')" >/dev/null
	t1=$(date +%s.%N)
	secs "$t0" "$t1"
}

# The lock probe: a session that takes and releases the pipeline's row
# lock (SELECT ... FOR NO KEY UPDATE: the lock every write call takes
# first, with its UPDATE of the row's version) every 10 ms, one
# transaction each, and records the longest wait: what a writer of the
# pipeline would have waited.  It changes nothing (no version bump), so a
# change building without the lock does not see it as a writer.  (Until
# issue 39 it took FOR UPDATE, which also waits for the KEY SHARE lock an
# insert referencing the row takes, and which no write call takes.)
psql_db -c "CREATE TABLE probe_stop (x int); CREATE TABLE probe_wait (ms float8)"
probe_start() {
	psql_db -c "TRUNCATE probe_stop, probe_wait" >/dev/null
	psql_db -c "
DO \$\$
DECLARE
    t0 timestamptz;
    w float8;
    mx float8 := 0;
BEGIN
    LOOP
        t0 := clock_timestamp();
        PERFORM 1 FROM streamforge.pipeline WHERE name = 'b' FOR NO KEY UPDATE;
        w := extract(epoch FROM clock_timestamp() - t0) * 1000;
        COMMIT;
        mx := greatest(mx, w);
        EXIT WHEN EXISTS (SELECT 1 FROM probe_stop);
        PERFORM pg_catalog.pg_sleep(0.01);
    END LOOP;
    INSERT INTO probe_wait VALUES (mx);
END \$\$" >/dev/null &
	PROBE=$!
	WRITER=
	if [ -n "$WRITER_MS" ]; then
		psql_db -c "
DO \$\$
BEGIN
    PERFORM streamforge.watermark('b');		-- loaded without the lock
    COMMIT;
    LOOP
        PERFORM pg_catalog.count(*) FROM streamforge.advance('b', 'p0', $EVENTS / 100);
        COMMIT;
        EXIT WHEN EXISTS (SELECT 1 FROM probe_stop);
        PERFORM pg_catalog.pg_sleep($WRITER_MS / 1000.0);
    END LOOP;
END \$\$" >/dev/null &
		WRITER=$!
	fi
	sleep 0.3
}
probe_stop() {
	psql_db -c "INSERT INTO probe_stop VALUES (1)" >/dev/null
	wait "$PROBE"
	[ -z "$WRITER" ] || wait "$WRITER"
	psql_db -At -c "SELECT round(max(ms)::numeric / 1000, 2) FROM probe_wait"
}

# change NAME SQL: the change in one transaction of a session that has the
# pipeline loaded (so that a cold load is not counted), with the probe
# running; then a cold load
change() {
	local name=$1 sql=$2 t0 t1 fmt wait
	probe_start
	t0=$(psql_db -At <<EOS
SELECT streamforge.watermark('b') IS NULL AS loaded \gset
BEGIN;
SELECT clock_timestamp() AS t0 \gset
SELECT pg_catalog.count(*) FROM $sql \gset
COMMIT;
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 2);
EOS
)
	wait=$(probe_stop)
	# the row's snapshot, or the one a change stored beside it (issue 39)
	fmt=$(psql_db -At -c "
SELECT CASE WHEN pg_catalog.substr(s, 1, 8) = pg_catalog.convert_to(E'SFSNAPB\n', 'UTF8')
            THEN 'binary' ELSE 'checkpoint' END || ' ' ||
       pg_catalog.pg_size_pretty(pg_catalog.octet_length(s)::bigint) ||
       CASE WHEN p.snapshot IS NULL THEN ' (stored)' ELSE ' (row)' END
  FROM streamforge.pipeline AS p,
       LATERAL (SELECT COALESCE(p.snapshot,
                  (SELECT x.snapshot FROM streamforge.stored_snapshot AS x
                    WHERE x.pipeline_id = p.id
                      AND x.snapshot_version = p.snapshot_version)) AS s) AS v
 WHERE p.name = 'b'")
	t1=$(time_cold)
	printf '    %-22s call %6.2f s   lock held %6.2f s   cold load after %5.2f s   snapshot %s\n' \
		"$name" "$t0" "$wait" "$t1" "$fmt"
	ROWS+=("| \`$name\` | $t0 s | $wait s | $(printf '%.2f' "$t1") s |")
}

ROWS=()
sf_say "cold load before any change: $(printf '%.2f' "$(time_cold)") s"
sf_say "definition changes at $EVENTS events, one transaction each (streamforge.redefine_concurrently = $CONCURRENTLY${WRITER_MS:+, a writer every $WRITER_MS ms})"
change add_partition "streamforge.add_partition('b', 'p4')"
change "add_window (backfill)" "streamforge.add_window('b', streamforge.fixed('h', 600))"
change "set_lateness raise" "streamforge.set_lateness('b', 200)"
change "set_lateness lower" "streamforge.set_lateness('b', 100)"
change set_retention "streamforge.set_retention('b', 1000000000)"
change set_emit "streamforge.set_emit('b', 'final')"
change drop_window "streamforge.drop_window('b', 'h')"

if [ -n "$OUT" ]; then
	{
		echo "| change ($EVENTS events, redefine_concurrently = $CONCURRENTLY${WRITER_MS:+, a writer every $WRITER_MS ms}) | call and commit | lock held | cold load after |"
		echo "|---|---|---|---|"
		printf '%s\n' "${ROWS[@]}"
		echo
	} >>"$OUT"
fi
