#!/usr/bin/env bash
# bench/ingest_paths.sh: what each way of getting data in costs (issue 14,
# docs/ingestion.md), side by side in one run, on one fixed-window pipeline:
#
#   copy_plain      COPY of N rows into a plain table (the floor)
#   copy_attached   the same COPY into a table attached to a pipeline
#                   (one append_batch per statement)
#   append_batch    append_batch over the same N events
#   ingest_batch    ingest_batch over the same N deliveries
#   ingest_json     ingest_json over the same N events as one JSON array
#   append_lateral  per-row append through LATERAL (N / 10 rows)
#
#   ./bench/ingest_paths.sh [--rows N] [--keep]     (default N = 1,000,000)
#
# Like bench/run.sh: builds, installs into a private copy of the PostgreSQL
# tree in a scratch directory, starts a throwaway cluster on a Unix socket
# there, measures, prints a table, stops and removes everything.  Times are
# wall-clock per statement (psql \timing), each in its own transaction.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
PORT=5434
ROWS=1000000
KEEP=
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) ROWS=$2; shift ;;
		--keep) KEEP=1 ;;
		*) echo "usage: $0 [--rows N] [--keep]" >&2; exit 2 ;;
	esac
	shift
done

sf_check_server_user
make -C "$SF_ROOT" PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "make failed"

bench_scratch bench-ingest
bench_initdb "shared_buffers = 512MB" "work_mem = 64MB" "max_wal_size = 8GB" "autovacuum = off"
bench_start

# the events: 1,000 keys, times spread over 1,000 windows of 60,000
psql_db -o /dev/null <<EOF
CREATE EXTENSION streamforge;
CREATE TABLE src AS
SELECT g AS id, 'k' || (g % 1000) AS k, (g::bigint * 7919) % 60000000 AS t, g % 100 AS v
  FROM generate_series(1, $ROWS) AS g;
COPY src TO '$SCRATCH/src.copy';
CREATE TABLE plain (id bigint, k text, t bigint, v integer);
CREATE TABLE attached (id bigint, k text, t bigint, v integer);
CREATE FUNCTION mk(name text) RETURNS void LANGUAGE sql
BEGIN ATOMIC
  SELECT streamforge.create_pipeline(name, ARRAY['p'], ARRAY[streamforge.fixed('w', 60000)]);
END;
SELECT mk(n) FROM unnest(ARRAY['p_attached', 'p_append', 'p_ingest', 'p_json', 'p_lateral']) AS n;
SELECT streamforge.attach('p_attached', 'attached', 'id', 'k', 't', 'v');
CREATE TABLE ev AS SELECT array_agg(ROW('p', id::text, k, t, v)::streamforge.event ORDER BY id) AS a FROM src;
CREATE TABLE dl AS SELECT array_agg(ROW('p', id - 1, id::text, k, t, v)::streamforge.delivery ORDER BY id) AS a FROM src;
CREATE TABLE js AS SELECT jsonb_agg(jsonb_build_object('partition', 'p', 'event_id', id::text, 'key', k, 'event_time', t, 'value', v) ORDER BY id) AS a FROM src;
CHECKPOINT;
EOF

measure() {
	local name=$1 n=$2 sql=$3 ms
	ms=$(psql_db -c '\timing on' -c "$sql" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
	printf '| %-15s | %9d | %10.0f | %12.0f |\n' "$name" "$n" "$ms" "$(echo "$n / ($ms / 1000)" | bc -l)"
}

echo
echo "| path            |    events |    time ms |     events/s |"
echo "|---|---|---|---|"
measure copy_plain "$ROWS" "COPY plain FROM '$SCRATCH/src.copy'"
measure copy_attached "$ROWS" "COPY attached FROM '$SCRATCH/src.copy'"
measure append_batch "$ROWS" "SELECT count(*) FROM ev, streamforge.append_batch('p_append', ev.a)"
measure ingest_batch "$ROWS" "SELECT count(*) FROM dl, streamforge.ingest_batch('p_ingest', dl.a)"
measure ingest_json "$ROWS" "SELECT count(*) FROM js, streamforge.ingest_json('p_json', js.a)"
measure append_lateral $((ROWS / 10)) "SELECT count(*) FROM (SELECT * FROM src WHERE id <= $ROWS / 10) AS s, LATERAL streamforge.append('p_lateral', 'p', s.id::text, s.k, s.t, s.v) AS c"
