#!/usr/bin/env bash
# bench/nexmark/run.sh: Nexmark q11 and q17 on streamforge, three ways in
# one run (issue 42; bench/nexmark/README.md, docs/performance.md).
#
#   ./bench/nexmark/run.sh [--events N] [--rate R] [--no-build] [--keep]
#                          [--callgrind N]
#
# In a throwaway cluster of a private install (like bench/run.sh): generates
# N Nexmark events (gen_nexmark.py, default 2,000,000: 1.84M bids), then for
# q11 (bids per bidder per 10 s session) and q17 (per auction per day:
# count, three FILTER counts, min, max, avg, sum) runs
#   agg     create_aggregate, fed by INSERT batches of 10,000 rows (the
#           attachment's statement trigger makes one batch call each),
#           then finish();
#   batch   the batch call alone (append_batch / append_measures_batch) on
#           the same rows, arrays built beforehand with the trigger's own
#           expressions, then finish();
#   sql     plain SQL: the query as a batch GROUP BY over the table
#           (recompute, once);
#   upsert  plain SQL: each batch INSERTed and upserted into a result
#           table (ON CONFLICT) in the same transaction;
# and, as the floor of the INSERT ways, the INSERT batches into a table
# without aggregate (plain).  Each way runs in its own backend; reported:
# backend CPU time (utime + stime of /proc/self/stat) and events/s per core
# (events of the generated stream, persons and auctions included, as Nexmark
# counts them, over that CPU time), wall time, peak RSS (VmHWM), and the
# ratios.  Every way's rows are compared row for row with the plain-SQL
# GROUP BY (a mismatch fails the run).
# --callgrind N: also instruction counts (valgrind --tool=callgrind, a
# single-user backend) of the agg and batch ways of q17 and q11 on the first N
# events (per event and per emitted row), and the callgrind files' top
# functions, in the same result file.
# Results: bench/results/nexmark-<date>-<shortsha>.md (and printed).
# q5, q7, q15, q16 and q19 (issue 44 item 7): bench/nexmark/aggs.sh, on the
# first --agg-events events (default 1,000,000; q19: --q19-events, default
# 200,000) of the same stream, the same ways; --aggs "q5 q7" runs some of
# them ("" none).
set -euo pipefail
# (one compound command: bash parses it whole, so editing this file during a
# run cannot change the run)
{
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
HERE=$SF_ROOT/bench/nexmark
PORT=5437
DB=postgres
EVENTS=2000000
RATE=10000
BUILD=1
KEEP=
CG=
AGG_EVENTS=1000000
Q19_EVENTS=200000
# shellcheck source=bench/nexmark/aggs.sh
. "$HERE/aggs.sh"
while [ $# -gt 0 ]; do
	case "$1" in
		--events) EVENTS=$2; shift ;;
		--rate) RATE=$2; shift ;;
		--no-build) BUILD= ;;
		--keep) KEEP=1 ;;
		--callgrind) CG=$2; shift ;;
		--agg-events) AGG_EVENTS=$2; shift ;;
		--q19-events) Q19_EVENTS=$2; shift ;;
		--aggs) AGG_QUERIES=$2; shift ;;
		*) echo "usage: $0 [--events N] [--rate R] [--no-build] [--keep] [--callgrind N] [--agg-events N] [--q19-events N] [--aggs LIST]" >&2; exit 2 ;;
	esac
	shift
done

sf_need_packages "${SF_BUILD_PACKAGES[@]}" python3
[ -n "$CG" ] && sf_need_packages valgrind
sf_check_server_user
if [ -n "$BUILD" ]; then
	make -C "$SF_ROOT" -j2 PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"
fi
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
DIRTY=$( (git -C "$SF_ROOT" status --porcelain --untracked-files=no -- src sql Makefile 2>/dev/null || echo unknown) | wc -l)
DATE=$(date -u +%Y-%m-%d)
bench_scratch nexmark "${NEXMARK_TMPDIR:-/tmp}"
cp "$HERE/nexmark.sql" "$HERE/gen_nexmark.py" "$SCRATCH/"
sf_is_root && chown -R postgres:postgres "$SCRATCH"
sf_say "generating $EVENTS Nexmark events at $RATE events/s of event time"
as_server python3 "$SCRATCH/gen_nexmark.py" --events "$EVENTS" --rate "$RATE" \
	>"$SCRATCH/bids.csv" 2>"$SCRATCH/gen.txt" || { cat "$SCRATCH/gen.txt"; sf_die "generator failed"; }
cat "$SCRATCH/gen.txt"
BIDS=$(awk '{ print $8 }' "$SCRATCH/gen.txt")

bench_initdb
bench_conf <<EOF
shared_buffers = 512MB
work_mem = 64MB
max_wal_size = 16GB
checkpoint_timeout = 1h
autovacuum = off
synchronous_commit = off
jit = off
EOF
bench_start

sf_say "loading the bids and making the aggregates"
psql_db -v csv="$SCRATCH/bids.csv" -v clk="$(getconf CLK_TCK)" -f "$SCRATCH/nexmark.sql" >/dev/null
psql_db -c "SELECT nx.build_batches('q11b'), nx.build_batches('q17b')" >/dev/null
aggs_setup
if [ -n "$CG" ]; then
	# the loaded state, for the single-user callgrind runs at the end
	bench_stop
	as_server cp -a "$SCRATCH/data" "$SCRATCH/cgdata"
	bench_start
fi

RCOLS="pipeline, window_name, key, window_start, window_end, count, sum, min, max, seq, final, epoch, window_start_ts, window_end_ts, aggregates"
# way NAME SQL...: in a new backend, CPU and wall time of the statements
way() {
	local name=$1; shift
	sf_say "  $name"
	{
		echo "SET client_min_messages = warning;"
		echo "SELECT nx.cpu() AS c0, extract(epoch FROM clock_timestamp()) AS w0 \\gset"
		echo "\\o /dev/null"
		echo "SELECT nx.cpu() AS c1 \\gset"
		for s in "$@"; do
			# --mark: the CPU time of what follows is reported apart
			if [ "$s" = --mark ]; then echo "SELECT nx.cpu() AS c1 \\gset"; else printf '%s\n' "$s"; fi
		done
		echo "\\o"
		echo "SELECT '$name', nx.cpu() - :c0, extract(epoch FROM clock_timestamp()) - :w0, nx.hwm(), nx.cpu() - :c1;"
	} | psql_db -At -F '|' >>"$SCRATCH/ways.txt"
}
sf_say "measuring"
way plain "CALL nx.feed_insert('plain');"
for q in q17 q11; do
	way "$q agg" "CALL nx.feed_insert('${q}a');" --mark "SELECT streamforge.finish('${q}a') IS NULL;"
	way "$q batch" "CALL nx.feed_batch('${q}b');" "SELECT streamforge.finish('${q}b') IS NULL;"
	way "$q sql" "SELECT nx.${q}_sql('plain') AS qq \\gset" "CREATE TABLE nx.${q}_res AS :qq;"
	way "$q upsert" "CALL nx.feed_upsert('$q');"
done
# the floor of item 1: q17's results rows COPYed into a table like the
# table of its results (0.4.0, issue 42 item 2: same columns, indexes and
# generated columns; the COPY gives every column but the generated ones)
QT=$(psql_db -At -c "SELECT streamforge_internal.aggregate_results_table(results_id)
	FROM streamforge.aggregate WHERE name = 'q17a'")
QCOLS=$(psql_db -At -c "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum)
	FROM pg_attribute WHERE attrelid = '$QT'::regclass AND attnum > 0 AND NOT attisdropped
	AND attgenerated = ''")
psql_db -c "CREATE TABLE nx.results_copy (LIKE $QT INCLUDING ALL);
	COPY (SELECT $QCOLS FROM $QT) TO '$SCRATCH/q17rows.copy';" >/dev/null
way "q17 copy" "COPY nx.results_copy ($QCOLS) FROM '$SCRATCH/q17rows.copy';"
cat "$SCRATCH/ways.txt"

sf_say "comparing every way with the plain-SQL GROUP BY, row for row"
psql_db -At -F '|' >"$SCRATCH/cmp.txt" <<'EOSQL'
CREATE VIEW nx.q17_upv AS SELECT auction, day AS window_start, total_bids, rank1_bids, rank2_bids,
    rank3_bids, min_price, max_price, sum_price / total_bids AS avg_price, sum_price FROM nx.q17_up;
CREATE VIEW nx.q11_upv AS SELECT bidder, s AS window_start, last + interval '10 seconds' AS window_end,
    bid_count FROM nx.q11_up;
CREATE FUNCTION nx.diff(a text, b text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint; m bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((SELECT * FROM (%s) x EXCEPT ALL SELECT * FROM (%s) y)
                     UNION ALL (SELECT * FROM (%s) y EXCEPT ALL SELECT * FROM (%s) x)) d', a, b, b, a) INTO n;
    RETURN n;
END $$;
SELECT 'q17', w, (SELECT count(*) FROM nx.q17_res),
       nx.diff('SELECT auction, window_start::timestamp, total_bids, rank1_bids, rank2_bids, rank3_bids,
                       min_price, max_price, avg_price, sum_price FROM nx.q17_res',
               format('SELECT auction, (window_start AT TIME ZONE ''UTC'')::timestamp, total_bids, rank1_bids, rank2_bids,
                              rank3_bids, min_price, max_price, avg_price, sum_price FROM %s%s', v,
                      CASE WHEN v LIKE 'public.%' THEN ' WHERE final' ELSE '' END))
  FROM (VALUES ('agg', 'public.q17a'), ('batch', 'public.q17b'), ('upsert', 'nx.q17_upv')) AS x(w, v)
UNION ALL
SELECT 'q11', w, (SELECT count(*) FROM nx.q11_res),
       nx.diff('SELECT bidder, window_start::timestamp, window_end::timestamp, bid_count FROM nx.q11_res',
               format('SELECT bidder, (window_start AT TIME ZONE ''UTC'')::timestamp,
                              (window_end AT TIME ZONE ''UTC'')::timestamp, bid_count FROM %s%s', v,
                      CASE WHEN v LIKE 'public.%' THEN ' WHERE final' ELSE '' END))
  FROM (VALUES ('agg', 'public.q11a'), ('batch', 'public.q11b'), ('upsert', 'nx.q11_upv')) AS x(w, v);
EOSQL
cat "$SCRATCH/cmp.txt"
BAD=$(awk -F'|' '$4 != 0' "$SCRATCH/cmp.txt" | wc -l)

OUT=$SF_ROOT/bench/results/nexmark-$DATE-$SHA.md
[ "$DIRTY" -gt 0 ] && OUT=$SF_ROOT/bench/results/nexmark-$DATE-$SHA-dirty.md
{
	echo "# Nexmark q11 and q17 ($DATE, $SHA$([ "$DIRTY" -gt 0 ] && echo ", uncommitted changes"))"
	echo
	echo "bench/nexmark/run.sh --events $EVENTS --rate $RATE: $(cat "$SCRATCH/gen.txt")."
	echo "One run; each way in its own backend of one cluster; CPU = user + system time of that backend"
	echo "(/proc/self/stat), events/s per core = all $EVENTS generated events (Nexmark's count; $BIDS are bids) / CPU."
	echo "The machine has 2 cores shared with other sessions: CPU time is what to compare, wall time is noisy."
	echo
	echo "| query | way | CPU (s) | wall (s) | events/s per core | peak RSS (MB) | final rows | rows equal to plain SQL |"
	echo "|---|---|---:|---:|---:|---:|---:|---|"
	awk -F'|' -v ev="$EVENTS" -v cmpf="$SCRATCH/cmp.txt" '
		BEGIN { while ((getline l < cmpf) > 0) { split(l, f, "|"); rows[f[1]] = f[3]; d[f[1] " " f[2]] = f[4] } }
		{ split($1, nw, " "); q = nw[1]; w = nw[2]; cpu[$1] = $2; mark[$1] = $5
		  if (w == "copy") next
		  eq = (w == "sql" ? "(the reference)" : (w == "" ? "" : ((q " " w) in d ? (d[q " " w] == 0 ? "yes" : "NO: " d[q " " w] " rows differ") : "")))
		  printf "| %s | %s | %.2f | %.2f | %.0f | %.0f | %s | %s |\n", (w == "" ? "-" : q), (w == "" ? "INSERT batches, no aggregate (floor)" : w),
			$2, $3, ($2 > 0 ? ev / $2 : 0), $4 / 1024, (w == "" ? "" : rows[q]), eq }
		END {
			print ""
			print "| query | agg / sql (CPU) | agg / upsert (CPU) | agg / batch (CPU) | trigger path / batch call: (agg - floor) / batch |"
			print "|---|---:|---:|---:|---:|"
			split("q17 q11", qs, " ")
			for (i = 1; i <= 2; i++) { q = qs[i]
				printf "| %s | %.2f | %.2f | %.2f | %.2f |\n", q, cpu[q " agg"] / cpu[q " sql"], cpu[q " agg"] / cpu[q " upsert"],
					cpu[q " agg"] / cpu[q " batch"], (cpu[q " agg"] - cpu["plain"]) / cpu[q " batch"] }
			print ""
			print "Output rows (item 1): q17 emits all its final rows in finish() (one day); the CPU of that call"
			print "(the engine finalizing every bucket, plus writing the rows) against a COPY of the same rows into a"
			print "table like the table of the aggregate results (LIKE ... INCLUDING ALL: the same columns and indexes):"
			print ""
			print "| rows | finish() CPU (s) | per row (us) | COPY CPU (s) | per row (us) | ratio (goal <= 3) |"
			print "|---:|---:|---:|---:|---:|---:|"
			printf "| %d | %.2f | %.1f | %.2f | %.1f | %.2f |\n", rows["q17"], mark["q17 agg"], 1e6 * mark["q17 agg"] / rows["q17"],
				cpu["q17 copy"], 1e6 * cpu["q17 copy"] / rows["q17"], (cpu["q17 copy"] > 0 ? mark["q17 agg"] / cpu["q17 copy"] : 0)
		}' "$SCRATCH/ways.txt"
	echo
	echo "Ways: agg = create_aggregate fed by INSERT batches of 10,000 rows, then finish(); batch = the"
	echo "trigger's batch call (append_batch / append_measures_batch) on arrays built beforehand, then finish();"
	echo "sql = the query as one GROUP BY over the table; upsert = each batch INSERTed and upserted into a"
	echo "result table in the same transaction; floor = the INSERT batches into a table without aggregate."
} >"$OUT"
AGG_BAD=0
aggs_measure
aggs_compare
aggs_report
[ -n "$CG" ] && . "$HERE/callgrind.sh"
[ -n "$CG" ] && aggs_callgrind
cat "$OUT"
[ "$BAD" -eq 0 ] || sf_die "$BAD comparisons with plain SQL differ ($SCRATCH/cmp.txt)"
[ "$AGG_BAD" -eq 0 ] || sf_die "$AGG_BAD comparisons of q5-q19 with plain SQL differ ($SCRATCH/aggcmp.txt)"
exit 0
}
