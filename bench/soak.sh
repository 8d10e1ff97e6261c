#!/usr/bin/env bash
# bench/soak.sh: bounded state (issue 13).  Two measurements, on a throwaway
# cluster of a private PostgreSQL tree (like bench/run.sh):
#
#   soak   10,000,000 events at a steady event-time rate (event time =
#          offset, ten keys, batches of 10,000 followed by an advance) into a
#          fixed + sliding + session pipeline with a small retention; at 1M,
#          5M and 10M events it records the pipeline's memory context in the
#          feeding session and the cold-load time and memory of a new
#          session.  The bound: memory and load time at 10M within 1.2x of
#          1M.
#   state  memory per remembered delivery and cold-load time at 1K, 100K,
#          1M and 10M deliveries, with and without retention (same feed,
#          one pipeline per size).
#
#   ./bench/soak.sh            both, full sizes (long: 10M events twice)
#   ./bench/soak.sh --quick    sizes divided by 10 (soak to 1M, state to 1M)
#   ./bench/soak.sh --only soak|state
#
# Writes bench/results/soak-<date>-<shortsha>[-quick].md and prints it.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
PORT=5434						# names the socket file only: no TCP listener
DB=soak
MODE=full
ONLY=
KEEP=
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) MODE=quick ;;
		--only) ONLY=$2; shift ;;
		--keep) KEEP=1 ;;
		-h | --help) sed -n '2,19p' "$0"; exit 0 ;;
		*) echo "usage: $0 [--quick] [--only soak|state] [--keep]" >&2; exit 2 ;;
	esac
	shift
done
if [ "$MODE" = quick ]; then
	SOAK_MARKS="100000 500000 1000000"
	STATE_SIZES="1000 100000 1000000"
	SUFFIX=-quick
else
	SOAK_MARKS="1000000 5000000 10000000"
	STATE_SIZES="1000 100000 1000000 10000000"
	SUFFIX=
fi
RETENTION=1000
LATENESS=100

sf_check_server_user
make -C "$SF_ROOT" PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
OUT=$SF_ROOT/bench/results/soak-$(date -u +%Y-%m-%d)-$SHA${ONLY:+-$ONLY}$SUFFIX.md

bench_scratch soak
bench_initdb
bench_conf <<EOF
shared_buffers = 512MB
max_wal_size = 16GB
checkpoint_timeout = 1h
synchronous_commit = off
autovacuum = off
EOF
bench_start
as_server "$SRVBIN/psql" -X -q -h "$SCRATCH" -p "$PORT" -U postgres -d postgres -c "CREATE DATABASE $DB"
psql_db <<'EOF'
CREATE EXTENSION streamforge;
CREATE FUNCTION pipeline_bytes() RETURNS bigint LANGUAGE sql AS $$
    SELECT coalesce(sum(total_bytes), 0)::bigint FROM pg_backend_memory_contexts
     WHERE name = 'streamforge pipeline' $$;
-- events f .. t - 1 (event time = offset, ten keys), then progress t - 1
CREATE FUNCTION feed(pl text, f bigint, t bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count(*) FROM streamforge.ingest_batch(pl,
        ARRAY(SELECT ROW('p', i, 'e' || i, 'k' || (i % 10), i, 1)::streamforge.delivery
                FROM generate_series(f, t - 1) AS i ORDER BY i));
    PERFORM count(*) FROM streamforge.advance(pl, 'p', t - 1);
END $$;
CREATE PROCEDURE feed_to(pl text, f bigint, t bigint) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 0 .. (t - f - 1) / 10000 LOOP
        PERFORM feed(pl, f + i * 10000, least(f + (i + 1) * 10000, t));
        COMMIT;
    END LOOP;
END $$;
-- this backend's CPU time (user + system) in ms, from /proc (10 ms ticks)
CREATE FUNCTION cpu_ms() RETURNS numeric LANGUAGE sql AS $$
    SELECT (split_part(s, ' ', 12)::numeric + split_part(s, ' ', 13)::numeric) * 10
      FROM (SELECT substr(f, strpos(f, ') ') + 2) AS s
              FROM pg_read_file('/proc/self/stat') AS f) AS x $$;
-- the cold load of a pipeline in this (new) session: "wall ms/CPU ms"; the
-- machine may be shared, so the CPU time is the figure to compare
CREATE FUNCTION load_ms(pl text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    c0 numeric := cpu_ms();
BEGIN
    PERFORM streamforge.watermark(pl);
    RETURN round(extract(epoch FROM clock_timestamp() - t0)::numeric * 1000, 1)
           || ' / ' || (cpu_ms() - c0);
END $$;
CREATE FUNCTION make(pl text, r bigint) RETURNS void LANGUAGE sql AS $$
    SELECT streamforge.create_pipeline(pl, ARRAY['p'],
        ARRAY[streamforge.fixed('f', 100), streamforge.sliding('s', 200, 50),
              streamforge.session('g', 5)],
        lateness => 100, retention => r) $$;
EOF

# cold load in a new session: "load_ms|bytes"
cold() { psql_val "SELECT load_ms('$1') || '|' || pipeline_bytes()"; }
# "snapshot MB / journal MB" of a pipeline
sizes() {
	psql_val "SELECT round(coalesce(octet_length(p.snapshot), 0) / 1048576.0, 1) || ' / ' ||
	                 round(coalesce((SELECT sum(octet_length(j.entry)) FROM streamforge.journal j
	                                  WHERE j.pipeline_id = p.id), 0) / 1048576.0, 1)
	            FROM streamforge.pipeline p WHERE p.name = '$1'"
}

{
	echo "# streamforge soak benchmark ($MODE), $(date -u +%Y-%m-%d), $SHA"
	echo
	echo "Pipeline: fixed(100) + sliding(200, 50) + session(5), lateness $LATENESS;"
	echo "events at event time = offset, ten keys, batches of 10,000 then an advance."
	echo "Memory: the pipeline's memory context (pg_backend_memory_contexts)."
	echo
} >"$SCRATCH/report.md"

if [ -z "$ONLY" ] || [ "$ONLY" = soak ]; then
	sf_say "soak: retention $RETENTION, marks $SOAK_MARKS"
	psql_val "SELECT make('soak', $RETENTION)" >/dev/null
	{
		echo "## Soak, retention $RETENTION"
		echo
		echo "| events | memory, feeding session | cold load, ms (wall / CPU) | memory after cold load | remembered identities |"
		echo "|---:|---:|---:|---:|---:|"
	} >>"$SCRATCH/report.md"
	from=0
	for mark in $SOAK_MARKS; do
		# the feeding session: one psql per mark, the pipeline stays cached
		mem=$(psql_db -At -c "CALL feed_to('soak', $from, $mark)" \
			-c "SELECT pipeline_bytes()")
		from=$mark
		c=$(cold soak)
		ids=$(psql_val "SELECT remembered_identities FROM streamforge.stats('soak')")
		echo "| $mark | $mem | ${c%%|*} | ${c##*|} | $ids |" >>"$SCRATCH/report.md"
		sf_say "soak: $mark events, memory $mem, cold load ${c%%|*} ms"
	done
	echo >>"$SCRATCH/report.md"
fi

if [ -z "$ONLY" ] || [ "$ONLY" = state ]; then
	{
		echo "## State per remembered delivery"
		echo
		echo "| deliveries | retention | memory after cold load | bytes per remembered delivery | cold load, ms (wall / CPU) | snapshot / journal, MB | cold load after one more call at compaction_threshold 0, ms (wall / CPU) | snapshot / journal, MB |"
		echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
	} >>"$SCRATCH/report.md"
	for n in $STATE_SIZES; do
		for r in NULL $RETENTION; do
			pl="s_${n}_$r"
			sf_say "state: $n deliveries, retention $r"
			psql_val "SELECT make('$pl', $r)" >/dev/null
			psql_db -c "CALL feed_to('$pl', 0, $n)"
			c=$(cold "$pl")
			s1=$(sizes "$pl")
			# one more call with the threshold at 0 compacts when the
			# journal outgrew four times the snapshot (always when there
			# is no snapshot yet): then the whole state is in the snapshot
			psql_db -c "SET streamforge.compaction_threshold = 0" \
				-c "SELECT count(*) FROM streamforge.advance('$pl', 'p', $n - 1)" >/dev/null
			c2=$(cold "$pl")
			s2=$(sizes "$pl")
			rem=$(psql_val "SELECT remembered_offsets FROM streamforge.stats('$pl')")
			per=$(psql_val "SELECT round(${c2##*|}::numeric / greatest($rem, 1), 1)")
			echo "| $n | $r | ${c2##*|} | $per | ${c%%|*} | $s1 | ${c2%%|*} | $s2 |" >>"$SCRATCH/report.md"
			psql_val "SELECT streamforge.drop_pipeline('$pl')" >/dev/null
		done
	done
	{
		echo
		echo "Bytes per remembered delivery include the live buckets and the fixed"
		echo "cost of the pipeline, so they are meaningful from 100K deliveries on."
	} >>"$SCRATCH/report.md"
fi

cp "$SCRATCH/report.md" "$OUT"
cat "$OUT"
