#!/usr/bin/env bash
# bench/joins.sh: the cost of a dimension join in create_aggregate
# (issue 47, item 4; docs/joins.md, "Cost").
#
#   ./bench/joins.sh [--events N] [--dims N] [--batch N] [--reps N] [--no-build]
#                    [--callgrind N] [--warmup STATEMENTS] [--keep]
#
# In one throwaway cluster of a private install (like bench/aggregates.sh),
# with a dimension of --dims rows (default 1,000,000; page -> section, 100
# sections), the same --events events (default 200,000, random pages,
# inserted by statements of --batch rows, default 1,000) go into three
# tables:
#   - nojoin: an aggregate grouped by the source's own section column;
#   - join:   an aggregate grouped by the dimension's section (JOIN pages);
#   - plain:  no aggregate; a statement-level trigger doing what a user
#             would write otherwise: INSERT ... SELECT the same join and
#             GROUP BY ... ON CONFLICT DO UPDATE into a totals table;
#   - joinh, plainh: join and plain with a copy of the dimension that also
#             has a hash index on its key (the lookup then probes it,
#             docs/joins.md "Cost"; the plain query may use it too);
#   - joini:  join with streamforge.join_directory_memory = 0: every lookup
#             probes the btree index (without the directory of the
#             dimension's rows, docs/joins.md).
# The wall-time runs are one session: from the second rep on, the
# directory of the dimension is full (1M rows need about 31,000 lookups of
# the first rep to sweep it in).  The session joins two dimensions of 1M
# rows (b.pages, b.hpages): their directories take 32 MB each, more than
# the default streamforge.join_directory_memory (64MB) leaves for both
# with their other bytes, so the session sets 128MB (otherwise each rep of
# join would drop joinh's directory and the other way round).
# It reports the wall time of the inserts and the CPU time of the backend
# (best and median of the --reps, leaving out the first when there are more:
# the machine is shared, read ratios, not absolute times) and the ratios
# join/nojoin (goal <= 1.5) and join/plain (goal < 1), the same for joinh
# and plainh, and joini/nojoin.
# --callgrind N: also the instructions of the three variants on the first
# N events (valgrind --tool=callgrind, each in a single-user backend
# started from the loaded cluster, counters zeroed at pg_backend_pid()
# after the table and the aggregate are created, dumped at pg_sleep()
# after the inserts), per event, the ratios, and where the join's
# instructions go (the lookup functions, inclusive).  --reps 0 runs only
# that.  --warmup S (default 10): the statements of --batch rows each
# backend runs before the counted ones, so that its cached plans are past
# the plan cache's first five (custom) plans, as in a long session.
# --keep: leave the scratch directory (the cluster stopped, callgrind's
# output files in cg/) for callgrind_annotate.
# Results: bench/results/joins-<date>-<shortsha>.md (and printed).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
BENCH=$SF_ROOT/bench
PORT=5437
DB=postgres
EVENTS=200000
DIMS=1000000
BATCH=1000
REPS=3
BUILD=1
CG=
WARM=10
KEEP=
VARIANTS="nojoin join plain joinh plainh joini"
while [ $# -gt 0 ]; do
	case "$1" in
		--events) EVENTS=$2; shift ;;
		--dims) DIMS=$2; shift ;;
		--batch) BATCH=$2; shift ;;
		--reps) REPS=$2; shift ;;
		--no-build) BUILD= ;;
		--callgrind) CG=$2; shift ;;
		--warmup) WARM=$2; shift ;;
		--keep) KEEP=1 ;;
		*) echo "usage: $0 [--events N] [--dims N] [--batch N] [--reps N] [--no-build] [--callgrind N] [--warmup STATEMENTS] [--keep]" >&2; exit 2 ;;
	esac
	shift
done

sf_need_packages "${SF_BUILD_PACKAGES[@]}"
sf_check_server_user
if [ -n "$BUILD" ]; then
	make -C "$SF_ROOT" -j2 PG_CONFIG="$PG_CONFIG" >/dev/null || sf_die "build failed"
fi
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
DATE=$(date -u +%Y-%m-%d)
bench_scratch bench
bench_initdb
bench_conf <<EOF
shared_buffers = 512MB
max_wal_size = 16GB
autovacuum = off
synchronous_commit = off
EOF
bench_start

psql_db -v events="$EVENTS" -v dims="$DIMS" -v batch="$BATCH" -v reps="$REPS" \
	-At -F '|' >"$SCRATCH/out.txt" <<'EOSQL'
CREATE EXTENSION streamforge;
SET client_min_messages = warning;
CREATE SCHEMA b;
CREATE TABLE b.pages (page integer PRIMARY KEY, section text NOT NULL);
INSERT INTO b.pages SELECT g, 's' || (g % 100) FROM generate_series(1, :dims) AS g;
VACUUM ANALYZE b.pages;
CREATE TABLE b.hpages (page integer PRIMARY KEY, section text NOT NULL);
INSERT INTO b.hpages SELECT * FROM b.pages;
CREATE INDEX hpages_page ON b.hpages USING hash (page);
VACUUM ANALYZE b.hpages;
-- the events: random pages, the section copied in for nojoin
CREATE TABLE b.ev AS SELECT i AS id, 1 + (hashint4(i) & 2147483647) % :dims AS page,
    i % 100 AS amount,
    timestamptz '2026-12-01 12:00:00+00' + i * interval '1 millisecond' AS at
  FROM generate_series(1, :events) AS i;
ALTER TABLE b.ev ADD COLUMN section text;
UPDATE b.ev e SET section = p.section FROM b.pages p WHERE p.page = e.page;
-- each statement reads its rows by this index: a sequential scan of
-- b.ev per statement would cost every variant the same large amount and
-- push every ratio towards 1
ALTER TABLE b.ev ADD PRIMARY KEY (id);
VACUUM ANALYZE b.ev;
CREATE TABLE b.results (name text, rep int, seconds float8, cpu float8);
-- CPU time (user + system) of this backend, in seconds (10 ms ticks)
CREATE FUNCTION b.cpu() RETURNS float8 LANGUAGE sql AS $$
    SELECT (split_part(s, ' ', 12)::bigint + split_part(s, ' ', 13)::bigint)::float8 / 100
      FROM (SELECT split_part(pg_read_file('/proc/self/stat'), ') ', 2) AS s) AS x $$;
CREATE TABLE b.totals (section text, window_start timestamptz, n bigint, total bigint,
                       PRIMARY KEY (section, window_start));
-- plain (b.pages) and plainh (b.hpages): the same static SQL, one
-- function per dimension (dynamic SQL would plan at every statement)
DO $d$
DECLARE v record;
BEGIN
    FOR v IN SELECT * FROM (VALUES ('plain', 'b.pages'), ('plainh', 'b.hpages')) AS x(name, dim) LOOP
        EXECUTE format($f$
CREATE FUNCTION b.%s_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO b.totals AS t
    SELECT d.section, streamforge.tumble(c.at, interval '1 minute'), count(*), sum(c.amount)
      FROM new_rows c JOIN %s d ON d.page = c.page
     GROUP BY 1, 2
    ON CONFLICT (section, window_start)
    DO UPDATE SET n = t.n + EXCLUDED.n, total = t.total + EXCLUDED.total;
    RETURN NULL;
END $$$f$, v.name, v.dim);
    END LOOP;
END $d$;
-- one source table per variant and repetition, loaded by statements of
-- :batch rows
CREATE PROCEDURE b.run(variant text, rep int, batch int) LANGUAGE plpgsql AS $$
DECLARE
    tbl text := format('b.src_%s_%s', variant, rep);
    t0 timestamptz;
    c0 float8;
    lo bigint := 1;
    hi bigint := (SELECT max(id) FROM b.ev);
BEGIN
    EXECUTE format('CREATE TABLE %s (id integer PRIMARY KEY, page integer, section text, amount integer, at timestamptz NOT NULL)', tbl);
    IF variant = 'nojoin' THEN
        PERFORM streamforge.create_aggregate(format('a_%s_%s', variant, rep), format($q$
            SELECT c.section, count(*) AS n, sum(c.amount) AS total FROM %s c
             GROUP BY c.section, streamforge.tumble(c.at, interval '1 minute') $q$, tbl));
    ELSIF variant IN ('join', 'joinh', 'joini') THEN
        PERFORM streamforge.create_aggregate(format('a_%s_%s', variant, rep), format($q$
            SELECT d.section, count(*) AS n, sum(c.amount) AS total
              FROM %s c JOIN %s d ON d.page = c.page
             GROUP BY d.section, streamforge.tumble(c.at, interval '1 minute') $q$, tbl,
             CASE variant WHEN 'joinh' THEN 'b.hpages' ELSE 'b.pages' END));
    ELSE
        EXECUTE format('CREATE TRIGGER plain AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows
                        FOR EACH STATEMENT EXECUTE FUNCTION b.%s_trigger()', tbl, variant);
    END IF;
    COMMIT;
    PERFORM set_config('streamforge.join_directory_memory',
                       CASE variant WHEN 'joini' THEN '0' ELSE '128MB' END, false);
    t0 := clock_timestamp();
    c0 := b.cpu();
    WHILE lo <= hi LOOP
        EXECUTE format('INSERT INTO %s SELECT id, page, section, amount, at FROM b.ev WHERE id >= $1 AND id < $2', tbl)
          USING lo, lo + batch;
        lo := lo + batch;
    END LOOP;
    COMMIT;
    INSERT INTO b.results VALUES (variant, rep, extract(epoch FROM clock_timestamp() - t0), b.cpu() - c0);
    COMMIT;
END $$;
SELECT format('CALL b.run(%L, %s, %s);', v, r, :batch)
  FROM generate_series(1, :reps) AS r, unnest(ARRAY['nojoin', 'join', 'plain', 'joinh', 'plainh', 'joini']) AS v
 ORDER BY r, v \gexec
SELECT name, round(min(seconds)::numeric, 3),
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds))::numeric, 3),
       round(min(cpu)::numeric, 2), round((percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu))::numeric, 2)
  FROM b.results WHERE rep > 1 OR (SELECT max(rep) FROM b.results) = 1 GROUP BY name ORDER BY name;
EOSQL

declare -A best med cbest cmed
while IFS='|' read -r name secs msecs cpu mcpu; do
	best[$name]=$secs
	med[$name]=$msecs
	cbest[$name]=$cpu
	cmed[$name]=$mcpu
done <"$SCRATCH/out.txt"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
OUT=$BENCH/results/joins-$DATE-$SHA.md
{
	echo "# bench/joins.sh ($DATE, $SHA)"
	echo
	if [ "$REPS" -gt 0 ]; then
		echo "$EVENTS events in statements of $BATCH rows, $DIMS dimension rows, $REPS reps of each variant, interleaved, in one session;"
		echo "the first rep (where the directory of the dimension is swept in) is left out when there are more than one."
		echo "Wall seconds of the inserts and CPU seconds of the backend (/proc/self/stat, 10 ms ticks), best and median; shared machine."
		echo
		echo "| variant | wall, best | wall, median | CPU, best | CPU, median |"
		echo "|---|---:|---:|---:|---:|"
		for v in $VARIANTS; do echo "| $v | ${best[$v]} | ${med[$v]} | ${cbest[$v]} | ${cmed[$v]} |"; done
		echo
		echo "| ratio | wall, best | wall, median | CPU, best | CPU, median | goal |"
		echo "|---|---:|---:|---:|---:|---|"
		for r in "join nojoin <=_1.5" "join plain <_1" "joinh nojoin <=_1.5" "joinh plainh <_1" "joini nojoin (the_btree_without_the_directory)"; do
			set -- $r
			echo "| $1 / $2 | $(ratio "${best[$1]}" "${best[$2]}") | $(ratio "${med[$1]}" "${med[$2]}") | $(ratio "${cbest[$1]}" "${cbest[$2]}") | $(ratio "${cmed[$1]}" "${cmed[$2]}") | ${3//_/ } |"
		done
	fi
} | tee "$OUT"

[ -n "$CG" ] || exit 0
# Instructions: each variant in a single-user backend under callgrind
as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -m fast -w stop >/dev/null
started=
mkdir -p "$SCRATCH/cg"
sf_is_root && chown postgres:postgres "$SCRATCH/cg"
declare -A ir
for v in $VARIANTS; do
	sf_say "callgrind: $v, $CG events"
	dim=b.pages
	case $v in *h) dim=b.hpages ;; esac
	f=$SCRATCH/cg/$v
	{
		echo "CREATE TABLE b.cg_$v (id integer PRIMARY KEY, page integer, section text, amount integer, at timestamptz NOT NULL);"
		case $v in
		nojoin) echo "SELECT streamforge.create_aggregate('cg_$v', \$q\$ SELECT c.section, count(*) AS n, sum(c.amount) AS total FROM b.cg_$v c GROUP BY c.section, streamforge.tumble(c.at, interval '1 minute') \$q\$);" ;;
		joini) echo "SET streamforge.join_directory_memory = 0;" ;;&
		join*) echo "SELECT streamforge.create_aggregate('cg_$v', \$q\$ SELECT d.section, count(*) AS n, sum(c.amount) AS total FROM b.cg_$v c JOIN $dim d ON d.page = c.page GROUP BY d.section, streamforge.tumble(c.at, interval '1 minute') \$q\$);" ;;
		plain*) echo "TRUNCATE b.totals;"
			echo "CREATE TRIGGER plain AFTER INSERT ON b.cg_$v REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION b.${v}_trigger();" ;;
		esac
		# the same dimension pages in shared buffers for every variant
		# (by their index: a sequential scan would go through a ring buffer)
		# (and by the hash index of b.hpages: the planner prefers it to
		# the primary key for these probes)
		echo "SET enable_hashjoin = off;"
		echo "SET enable_mergejoin = off;"
		echo "SET enable_bitmapscan = off;"
		echo "SELECT count(*) FROM b.ev e JOIN $dim p ON p.page = e.page WHERE e.id <= $((WARM * BATCH + CG));"
		echo "RESET enable_hashjoin;"
		echo "RESET enable_mergejoin;"
		echo "RESET enable_bitmapscan;"
		# the warm-up statements (not counted): the plan cache chooses
		# between custom and generic plans over the first five executions
		# of a statement, so the first statements of a session plan their
		# queries, which later ones do not
		lo=1
		while [ "$lo" -le "$((WARM * BATCH + CG))" ]; do
			[ "$lo" -eq "$((WARM * BATCH + 1))" ] && echo "SELECT pg_backend_pid();"
			echo "INSERT INTO b.cg_$v SELECT id, page, section, amount, at FROM b.ev WHERE id >= $lo AND id < $((lo + BATCH)) AND id <= $((WARM * BATCH + CG));"
			lo=$((lo + BATCH))
		done
		echo "SELECT pg_sleep(0);"
	} | awk '{ print; print "" }' >"$f.sql"
	sf_is_root && chown postgres:postgres "$f.sql"
	as_server valgrind --tool=callgrind --callgrind-out-file="$f.out" \
		--zero-before=pg_backend_pid --dump-before=pg_sleep \
		"$SRVBIN/postgres" --single -j -D "$SCRATCH/data" \
		-c fsync=off -c jit=off -c autovacuum=off "$DB" <"$f.sql" >"$f.log" 2>&1 ||
		{ tail -n 30 "$f.log"; sf_die "callgrind $v: the backend failed"; }
	if grep -qE '(^|\] )(ERROR|FATAL|PANIC):' "$f.log"; then
		grep -E '(^|\] )(ERROR|FATAL|PANIC):' "$f.log" | head -5
		sf_die "callgrind $v: the workload failed ($f.log)"
	fi
	part=$f.out.1
	[ -f "$part" ] || part=$f.out
	ir[$v]=$(grep -m1 '^summary:' "$part" | awk '{ print $2 }')
	callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$part" >"$f.ann" 2>/dev/null || true
	grep -E '^ *[0-9,]+ ' "$f.ann" | sed -n 1,45p >"$f.top" || true
done
{
	echo
	echo "## Instructions (callgrind), $CG events in statements of $BATCH rows, after $WARM statements of warm-up"
	echo
	echo "| variant | instructions | per event |"
	echo "|---|---:|---:|"
	for v in $VARIANTS; do
		awk -v v="$v" -v i="${ir[$v]}" -v n="$CG" 'BEGIN { printf "| %s | %.0f | %.0f |\n", v, i, i / n }'
	done
	echo
	echo "join / nojoin: $(ratio "${ir[join]}" "${ir[nojoin]}") (goal <= 1.5)"
	echo "join / plain:  $(ratio "${ir[join]}" "${ir[plain]}") (goal < 1)"
	echo "joinh / nojoin: $(ratio "${ir[joinh]}" "${ir[nojoin]}") (goal <= 1.5)"
	echo "joinh / plainh: $(ratio "${ir[joinh]}" "${ir[plainh]}") (goal < 1)"
	echo "joini / nojoin: $(ratio "${ir[joini]}" "${ir[nojoin]}") (the btree without the directory)"
	for v in join joinh joini; do
		for f in sf_join_found sf_join_value; do
			n=$(grep -m1 -E "[: ]$f( |\$)" "$SCRATCH/cg/$v.ann" | awk '{ gsub(",", "", $1); print $1 }')
			[ -n "$n" ] && awk -v v="$v" -v f="$f" -v i="$n" -v n="$CG" 'BEGIN { printf "\n%s: %s (inclusive): %.0f per event", v, f, i / n }'
		done
	done
	echo
	for v in join plain joinh; do
		echo
		echo "### $v: top functions by inclusive instructions"
		echo
		echo '```'
		sed 's/ \/[^ ]*:/ /' "$SCRATCH/cg/$v.top" | cut -c1-160
		echo '```'
	done
} | tee -a "$OUT"
