#!/usr/bin/env bash
# bench/ingest_json.sh: ingest_json in C against the PL/pgSQL version it
# replaced (0.2.0 development, commit 9fb8726), and both against
# ingest_batch / append_batch, side by side in one run on the same events
# (1,000 keys, one fixed-window pipeline per measurement):
#
#   append_batch        append_batch over N events (the floor of the
#                       events-without-offsets path)
#   json_events         ingest_json over the same N events as JSON (C)
#   json_events_plpgsql the same through the old PL/pgSQL function
#   ingest_batch        ingest_batch over N deliveries (with offsets)
#   json_offsets        ingest_json over the same N deliveries as JSON (C)
#   json_offsets_plpgsql the same through the old PL/pgSQL function
#
#   ./bench/ingest_json.sh [--rows N] [--keep]     (default N = 1,000,000)
#
# The old function and its two helpers are read from git history (the
# JSON section of sql/install/60_ingest.sql at 9fb8726) and created in a
# schema of their own, bench_old; without that history the PL/pgSQL rows
# are skipped.  Like bench/ingest_paths.sh otherwise: private tree, a
# throwaway cluster, wall-clock per statement, each its own transaction.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
PORT=5435
ROWS=1000000
KEEP=
OLD_COMMIT=9fb8726
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

bench_scratch bench-json

# the old PL/pgSQL ingest_json, renamed into schema bench_old
OLD=
if git -C "$SF_ROOT" cat-file -e "$OLD_COMMIT:sql/install/60_ingest.sql" 2>/dev/null; then
	{
		echo "CREATE SCHEMA bench_old;"
		git -C "$SF_ROOT" show "$OLD_COMMIT:sql/install/60_ingest.sql" |
			sed -n '/^-- JSON$/,/^-- Tables attached to a pipeline$/p' |
			sed -e 's/streamforge_internal\.json_/bench_old.json_/g' \
			    -e 's/streamforge\.ingest_json/bench_old.ingest_json/g'
	} >"$SCRATCH/old.sql"
	OLD=1
else
	echo "note: no git history for $OLD_COMMIT; skipping the PL/pgSQL rows" >&2
fi

bench_initdb "shared_buffers = 512MB" "work_mem = 64MB" "max_wal_size = 8GB" "autovacuum = off"
bench_start

psql_db -o /dev/null <<SQL
CREATE EXTENSION streamforge;
CREATE TABLE src AS
SELECT g AS id, 'k' || (g % 1000) AS k, (g::bigint * 7919) % 60000000 AS t, g % 100 AS v
  FROM generate_series(1, $ROWS) AS g;
CREATE FUNCTION mk(name text) RETURNS void LANGUAGE sql
BEGIN ATOMIC
  SELECT streamforge.create_pipeline(name, ARRAY['p'], ARRAY[streamforge.fixed('w', 60000)]);
END;
SELECT mk(n) FROM unnest(ARRAY['p_append', 'p_json_ev', 'p_json_ev_old',
                               'p_ingest', 'p_json_off', 'p_json_off_old']) AS n;
CREATE TABLE ev AS SELECT array_agg(ROW('p', id::text, k, t, v)::streamforge.event ORDER BY id) AS a FROM src;
CREATE TABLE dl AS SELECT array_agg(ROW('p', id - 1, id::text, k, t, v)::streamforge.delivery ORDER BY id) AS a FROM src;
CREATE TABLE js_ev AS SELECT jsonb_agg(jsonb_build_object('partition', 'p', 'event_id', id::text, 'key', k, 'event_time', t, 'value', v) ORDER BY id) AS a FROM src;
CREATE TABLE js_off AS SELECT jsonb_agg(jsonb_build_object('partition', 'p', 'source_offset', id - 1, 'event_id', id::text, 'key', k, 'event_time', t, 'value', v) ORDER BY id) AS a FROM src;
CHECKPOINT;
SQL
[ -n "$OLD" ] && psql_db -o /dev/null -f "$SCRATCH/old.sql"

declare -A MS
measure() {
	local name=$1 sql=$2 ms
	ms=$(psql_db -c '\timing on' -c "$sql" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
	MS[$name]=$ms
	printf '| %-20s | %9d | %10.0f | %12.0f |\n' "$name" "$ROWS" "$ms" "$(echo "$ROWS / ($ms / 1000)" | bc -l)"
}
ratio() { printf '| %-46s | %6.2f |\n' "$1" "$(echo "${MS[$2]} / ${MS[$3]}" | bc -l)"; }

echo
echo "| path                 |    events |    time ms |     events/s |"
echo "|---|---|---|---|"
measure append_batch "SELECT count(*) FROM ev, streamforge.append_batch('p_append', ev.a)"
measure json_events "SELECT count(*) FROM js_ev, streamforge.ingest_json('p_json_ev', js_ev.a)"
[ -n "$OLD" ] && measure json_events_plpgsql "SELECT count(*) FROM js_ev, bench_old.ingest_json('p_json_ev_old', js_ev.a)"
measure ingest_batch "SELECT count(*) FROM dl, streamforge.ingest_batch('p_ingest', dl.a)"
measure json_offsets "SELECT count(*) FROM js_off, streamforge.ingest_json('p_json_off', js_off.a)"
[ -n "$OLD" ] && measure json_offsets_plpgsql "SELECT count(*) FROM js_off, bench_old.ingest_json('p_json_off_old', js_off.a)"

# the same state everywhere, or the comparison means nothing
psql_db -At -c "SELECT count(DISTINCT x) FROM (SELECT (SELECT string_agg(l::text, ',' ORDER BY l::text) FROM streamforge.live(n) AS l) AS x
                   FROM unnest(ARRAY['p_append', 'p_json_ev', 'p_ingest', 'p_json_off'$([ -n "$OLD" ] && echo ", 'p_json_ev_old', 'p_json_off_old'")]) AS n) AS s" |
	grep -qx 1 || sf_die "the pipelines differ after the runs"

echo
echo "| ratio (time)                                   |      x |"
echo "|---|---|"
ratio "json_events / append_batch" json_events append_batch
ratio "json_offsets / ingest_batch" json_offsets ingest_batch
if [ -n "$OLD" ]; then
	ratio "json_events_plpgsql / append_batch" json_events_plpgsql append_batch
	ratio "json_offsets_plpgsql / ingest_batch" json_offsets_plpgsql ingest_batch
	ratio "json_events_plpgsql / json_events (speed-up)" json_events_plpgsql json_events
	ratio "json_offsets_plpgsql / json_offsets (speed-up)" json_offsets_plpgsql json_offsets
fi
