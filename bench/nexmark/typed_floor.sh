#!/usr/bin/env bash
# bench/nexmark/typed_floor.sh: what a typed results table per aggregate
# (issue 42 item 2, docs/design/typed-results.md) would save on the write
# of one final row of q17, measured before building it.
#
#   ./bench/nexmark/typed_floor.sh [--events N] [--no-build] [--keep]
#
# In a throwaway cluster of a private install (as run.sh): N Nexmark
# events (default 200,000), nexmark.sql (so the four aggregates q11a, q11b,
# q17a, q17b exist, each with its two partial indexes on
# streamforge.results, as in every run.sh run), q17a fed by its INSERT
# batches and finished.  Then q17a's final rows are COPYed, each COPY in a
# single-user backend under callgrind (instructions of the COPY alone) and
# in a backend of the running cluster (CPU time, three times), into:
#   shared  a table LIKE streamforge.results INCLUDING ALL: the shared
#           table as the sink writes it today (its three indexes and the
#           eight partial indexes of the four aggregates; run.sh's floor);
#   own     a table LIKE streamforge.results with only its own three
#           indexes (the shared table had no aggregate's partial index);
#   typed   the typed table of the design: q17's columns (auction,
#           window_start, window_end, the eight aggregates, final) and
#           seq, epoch; a unique index (auction, window_start, window_end)
#           and the open-rows index (window_end) WHERE NOT final.
# And, under callgrind, the UPDATE of final that 'update' mode runs
# (sink_mark_final) on the same rows loaded open, in each of the tables.
# Results: bench/results/nexmark-<date>-<shortsha>-typed-floor.md.
set -euo pipefail
{
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
HERE=$SF_ROOT/bench/nexmark
PORT=5438
DB=postgres
EVENTS=200000
BUILD=1
KEEP=
while [ $# -gt 0 ]; do
	case "$1" in
		--events) EVENTS=$2; shift ;;
		--no-build) BUILD= ;;
		--keep) KEEP=1 ;;
		*) echo "usage: $0 [--events N] [--no-build] [--keep]" >&2; exit 2 ;;
	esac
	shift
done

sf_need_packages "${SF_BUILD_PACKAGES[@]}" python3 valgrind
sf_check_server_user
if [ -n "$BUILD" ]; then
	make -C "$SF_ROOT" -j2 PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"
fi
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
DATE=$(date -u +%Y-%m-%d)
bench_scratch typed "${NEXMARK_TMPDIR:-/tmp}"
cp "$HERE/nexmark.sql" "$HERE/gen_nexmark.py" "$SCRATCH/"
sf_is_root && chown -R postgres:postgres "$SCRATCH"
sf_say "generating $EVENTS Nexmark events"
as_server python3 "$SCRATCH/gen_nexmark.py" --events "$EVENTS" --rate 10000 \
	>"$SCRATCH/bids.csv" 2>"$SCRATCH/gen.txt" || { cat "$SCRATCH/gen.txt"; sf_die "generator failed"; }
bench_initdb
bench_conf <<EOF
shared_buffers = 256MB
max_wal_size = 4GB
checkpoint_timeout = 1h
autovacuum = off
synchronous_commit = off
jit = off
EOF
bench_start

sf_say "loading, feeding q17a, exporting its rows"
psql_db -v csv="$SCRATCH/bids.csv" -v clk="$(getconf CLK_TCK)" -f "$SCRATCH/nexmark.sql" >/dev/null
psql_db -c "CALL nx.feed_insert('q17a');" >/dev/null
psql_db -c "SELECT streamforge.finish('q17a') IS NULL;" >/dev/null
RCOLS="pipeline, window_name, key, window_start, window_end, count, sum, min, max, seq, final, epoch, window_start_ts, window_end_ts, aggregates"
TCOLS="auction, window_start, window_end, total_bids, rank1_bids, rank2_bids, rank3_bids, min_price, max_price, avg_price, sum_price, final, seq, epoch"
psql_db <<EOSQL >/dev/null
COPY (SELECT $RCOLS FROM streamforge.results WHERE pipeline = 'q17a') TO '$SCRATCH/shared.copy';
COPY (SELECT v.auction, v.window_start, v.window_end, v.total_bids, v.rank1_bids, v.rank2_bids,
             v.rank3_bids, v.min_price, v.max_price, v.avg_price, v.sum_price, v.final,
             r.seq, r.epoch
        FROM public.q17a AS v
        JOIN streamforge.results AS r
          ON r.pipeline = 'q17a' AND r.key = ARRAY[v.auction::text]::text
         AND r.window_start_ts = v.window_start) TO '$SCRATCH/typed.copy';
COPY (SELECT ${RCOLS/final/false} FROM streamforge.results WHERE pipeline = 'q17a') TO '$SCRATCH/shared_open.copy';
COPY (SELECT v.auction, v.window_start, v.window_end, v.total_bids, v.rank1_bids, v.rank2_bids,
             v.rank3_bids, v.min_price, v.max_price, v.avg_price, v.sum_price, false,
             r.seq, r.epoch
        FROM public.q17a AS v
        JOIN streamforge.results AS r
          ON r.pipeline = 'q17a' AND r.key = ARRAY[v.auction::text]::text
         AND r.window_start_ts = v.window_start) TO '$SCRATCH/typed_open.copy';
EOSQL
ROWS=$(wc -l <"$SCRATCH/shared.copy")
TROWS=$(wc -l <"$SCRATCH/typed.copy")
[ "$ROWS" -eq "$TROWS" ] || sf_die "q17a: $ROWS results rows but $TROWS typed rows"
NPART=$(psql_db -At -c "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
	WHERE c.oid = 'streamforge.results'::regclass AND i.indpred IS NOT NULL AND NOT i.indisunique
	AND pg_get_indexdef(i.indexrelid) LIKE '%results_aggregate%'")

# the three tables, made before each measurement
mk_shared="CREATE TABLE nx.t_shared (LIKE streamforge.results INCLUDING ALL);"
mk_own="CREATE TABLE nx.t_own (LIKE streamforge.results INCLUDING DEFAULTS INCLUDING GENERATED);
CREATE INDEX ON nx.t_own (pipeline, window_name, window_start, pg_catalog.md5(key));
CREATE INDEX ON nx.t_own (pipeline, window_end) WHERE NOT final;
CREATE INDEX ON nx.t_own USING hash (key);"
mk_typed="CREATE TABLE nx.t_typed (auction bigint NOT NULL, window_start timestamptz NOT NULL,
    window_end timestamptz NOT NULL, total_bids bigint, rank1_bids bigint, rank2_bids bigint,
    rank3_bids bigint, min_price bigint, max_price bigint, avg_price numeric, sum_price numeric,
    final boolean NOT NULL DEFAULT false, seq bigint, epoch bigint NOT NULL DEFAULT 1);
CREATE UNIQUE INDEX ON nx.t_typed (auction, window_start, window_end);
CREATE INDEX ON nx.t_typed (window_end) WHERE NOT final;"
copy_of() {
	case $1 in
		shared) echo "COPY nx.t_shared ($RCOLS) FROM '$SCRATCH/shared.copy';" ;;
		own) echo "COPY nx.t_own ($RCOLS) FROM '$SCRATCH/shared.copy';" ;;
		typed) echo "COPY nx.t_typed ($TCOLS) FROM '$SCRATCH/typed.copy';" ;;
	esac
}
mk_of() { case $1 in shared) echo "$mk_shared" ;; own) echo "$mk_own" ;; typed) echo "$mk_typed" ;; esac; }
# the UPDATE of final that 'update' mode runs (sink_mark_final), on rows
# loaded open (final false) into tables nx.u_*
open_of() {
	case $1 in
		shared|own) echo "COPY nx.u_$1 ($RCOLS) FROM '$SCRATCH/shared_open.copy';" ;;
		typed) echo "COPY nx.u_typed ($TCOLS) FROM '$SCRATCH/typed_open.copy';" ;;
	esac
}
update_of() {
	case $1 in
		shared|own) echo "UPDATE nx.u_$1 SET final = true WHERE pipeline = 'q17a' AND NOT final AND window_end < 9223372036854775807;" ;;
		typed) echo "UPDATE nx.u_typed SET final = true WHERE NOT final AND window_end < 'infinity';" ;;
	esac
}

sf_say "CPU time, three runs of each COPY"
: >"$SCRATCH/cpu.txt"
for _ in 1 2 3; do
	for t in shared own typed; do
		{
			echo "SET client_min_messages = warning;"
			echo "DROP TABLE IF EXISTS nx.t_$t;"
			mk_of "$t"
			echo "SELECT nx.cpu() AS c0 \\gset"
			copy_of "$t"
			echo "SELECT '$t', nx.cpu() - :c0;"
			echo "DROP TABLE nx.t_$t;"
		} | psql_db -At -F '|' >>"$SCRATCH/cpu.txt"
	done
done

sf_say "callgrind of each COPY and UPDATE"
bench_stop
mkdir -p "$SCRATCH/cg"
sf_is_root && chown postgres:postgres "$SCRATCH/cg"
: >"$SCRATCH/ir.txt"
: >"$SCRATCH/ir_update.txt"
for job in copy:shared copy:own copy:typed update:shared update:own update:typed; do
	op=${job%%:*} t=${job#*:}
	f=$SCRATCH/cg/$op-$t
	if [ "$op" = copy ]; then
		{ mk_of "$t"; echo; echo "SELECT pg_backend_pid();"; echo; copy_of "$t"; echo; echo "SELECT pg_sleep(0);"; }
	else
		{ mk_of "$t" | sed 's/nx\.t_/nx.u_/g'; echo; open_of "$t"; echo; echo "VACUUM ANALYZE nx.u_$t;"; echo;
		  echo "SELECT pg_backend_pid();"; echo; update_of "$t"; echo; echo "SELECT pg_sleep(0);"; }
	fi | tr '\n' ' ' | sed 's/; /;\n\n/g' >"$f.sql"
	sf_is_root && chown postgres:postgres "$f.sql"
	as_server valgrind --tool=callgrind --callgrind-out-file="$f.out" \
		--zero-before=pg_backend_pid --dump-before=pg_sleep \
		"$SRVBIN/postgres" --single -j -D "$SCRATCH/data" \
		-c fsync=off -c jit=off -c autovacuum=off "$DB" <"$f.sql" >"$f.log" 2>&1 ||
		{ tail -n 30 "$f.log"; sf_die "callgrind $job: the backend failed"; }
	if grep -qE '(^|\] )(ERROR|FATAL|PANIC):' "$f.log"; then
		grep -E '(^|\] )(ERROR|FATAL|PANIC):' "$f.log" | head -5
		sf_die "callgrind $job: the workload failed ($f.log)"
	fi
	part=$f.out.1
	[ -f "$part" ] || part=$f.out
	ir=$(grep -m1 '^summary:' "$part" | awk '{ print $2 }')
	callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$part" >"$f.ann" 2>/dev/null || true
	# (none at a size whose rows fit without an index insert above the
	# threshold: ${ins:-0} below)
	ins=$({ grep -m1 -E '[: ]ExecInsertIndexTuples( |$)' "$f.ann" || true; } | awk '{ gsub(",", "", $1); print $1 }')
	if [ "$op" = copy ]; then
		echo "$t|$ir|${ins:-0}" >>"$SCRATCH/ir.txt"
	else
		echo "$t|$ir|${ins:-0}" >>"$SCRATCH/ir_update.txt"
	fi
done

OUT=$SF_ROOT/bench/results/nexmark-$DATE-$SHA-typed-floor.md
{
	echo "# Issue 42 item 2: a q17 final row COPYed into the shared results table and into a typed table ($DATE, $SHA)"
	echo
	echo "bench/nexmark/typed_floor.sh --events $EVENTS: $(cat "$SCRATCH/gen.txt")."
	echo "q17a fed by its INSERT batches and finished: $ROWS final rows. streamforge.results has $NPART partial"
	echo "indexes of aggregates (two for each of q11a, q11b, q17a, q17b). Each COPY writes the same $ROWS rows."
	echo
	echo "| table | instructions (callgrind) | per row | of which index insertion | per row | CPU (s), 3 runs | CPU per row (us), best |"
	echo "|---|---:|---:|---:|---:|---|---:|"
	awk -F'|' -v r="$ROWS" -v cpuf="$SCRATCH/cpu.txt" '
		BEGIN { while ((getline l < cpuf) > 0) { split(l, f, "|"); c[f[1]] = c[f[1]] (c[f[1]] == "" ? "" : ", ") sprintf("%.3f", f[2]);
		          if (!(f[1] in best) || f[2] < best[f[1]]) best[f[1]] = f[2] } }
		{ if ($1 == "shared") name = "shared: LIKE streamforge.results INCLUDING ALL (today)"
		  else if ($1 == "own") name = "own: streamforge.results without the partial indexes of the aggregates"
		  else name = "typed: the columns of q17, unique (auction, window_start, window_end), open rows"
		  printf "| %s | %.0f | %.0f | %.0f | %.0f | %s | %.1f |\n", name, $2, $2 / r, $3, $3 / r, c[$1], 1e6 * best[$1] / r }' "$SCRATCH/ir.txt"
	echo
	echo "Instructions are of the COPY statement alone (single-user backend, counters zeroed at"
	echo "pg_backend_pid() after the CREATE TABLE, dumped at pg_sleep()). CPU: user + system time of a"
	echo "backend of the running cluster (/proc/self/stat, 10 ms ticks: noisy at this size; the machine"
	echo "is shared). The COPY parses text input (the typed table's rows: bigint, timestamptz, numeric),"
	echo "which a sink writing Datums would not."
	echo
	echo "The UPDATE of final that 'update' mode runs after a call that finalized windows (sink_mark_final,"
	echo "finish() of q17 marks every row): the same rows loaded with final false (VACUUM ANALYZE after the"
	echo "load), then one UPDATE of all of them, instructions of the UPDATE alone. final is in the predicate of"
	echo "the open rows index, so no update is HOT: every index of the table gets a new entry."
	echo
	echo "| table | instructions (callgrind) | per row | of which index insertion | per row |"
	echo "|---|---:|---:|---:|---:|"
	awk -F'|' -v r="$ROWS" '{ printf "| %s | %.0f | %.0f | %.0f | %.0f |\n", $1, $2, $2 / r, $3, $3 / r }' "$SCRATCH/ir_update.txt"
} >"$OUT"
cat "$OUT"
exit 0
}
