#!/usr/bin/env bash
# bench/aggregates.sh: the cost of declared aggregates (issue 27,
# docs/aggregates.md, docs/performance.md "Measures and aggregates").
#
#   ./bench/aggregates.sh [--events N] [--reps N] [--no-build]
#
# In one throwaway cluster of a private install (like bench/run.sh), for a
# one-measure pipeline and for measures pipelines with 1, 3 and 8 declared
# aggregates (3 measures), it reports:
#   - memory per live bucket: the pipeline context of the same events in
#     two fixed windows minus in one, per event (each event adds exactly
#     one bucket, its identity and key are counted once either way);
#   - checkpoint bytes per live bucket, the same way;
#   - ingest_batch throughput (batches of 10,000 over 10,000 keys in one
#     fixed window, events/s, best of the repetitions) of the one-measure pipeline with ingest_batch and of the
#     3-measure, 8-aggregate pipeline with ingest_measures_batch, and their
#     ratio (issue 27 asks at least 0.6).
# Results: bench/results/aggregates-<date>-<shortsha>.md (and printed).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
BENCH=$SF_ROOT/bench
PORT=5434
DB=postgres
EVENTS=200000
REPS=3
BUILD=1
while [ $# -gt 0 ]; do
	case "$1" in
		--events) EVENTS=$2; shift ;;
		--reps) REPS=$2; shift ;;
		--no-build) BUILD= ;;
		*) echo "usage: $0 [--events N] [--reps N] [--no-build]" >&2; exit 2 ;;
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

psql_db -v events="$EVENTS" -v reps="$REPS" -At -F '|' >"$SCRATCH/out.txt" <<'EOSQL'
CREATE EXTENSION streamforge;
SET client_min_messages = warning;
CREATE SCHEMA b;
-- the events: key = event number (one bucket each), times in order
CREATE TABLE b.ev AS SELECT i, 'e' || i AS id, 'k' || i AS key, i AS t,
    (i * 7919) % 1000 - 500 AS a, (i * 31) % 97 AS b2, (i * 13) % 1000 AS c
  FROM generate_series(0, :events - 1) AS i;
CREATE TABLE b.one AS SELECT i / 10000 AS batch,
    array_agg(ROW('p', i, id, key, t, a)::streamforge.delivery ORDER BY i) AS d
  FROM b.ev GROUP BY 1;
CREATE TABLE b.multi AS SELECT i / 10000 AS batch,
    array_agg(ROW('p', i, id, key, t, ARRAY[a, b2, c])::streamforge.measures_delivery ORDER BY i) AS d
  FROM b.ev GROUP BY 1;
-- the throughput workload: 10,000 keys, as bench/run.sh has
CREATE TABLE b.one_t AS SELECT i / 10000 AS batch,
    array_agg(ROW('p', i, id, 'k' || (i % 10000), t, a)::streamforge.delivery ORDER BY i) AS d
  FROM b.ev GROUP BY 1;
CREATE TABLE b.multi_t AS SELECT i / 10000 AS batch,
    array_agg(ROW('p', i, id, 'k' || (i % 10000), t, ARRAY[a, b2, c])::streamforge.measures_delivery ORDER BY i) AS d
  FROM b.ev GROUP BY 1;
CREATE TABLE b.cfg (name text, measures text[], aggregates text[], naggs int);
INSERT INTO b.cfg VALUES
    ('one', NULL, NULL, 4),
    ('agg1', ARRAY['a', 'b', 'c'], ARRAY['sum(a)'], 1),
    ('agg3', ARRAY['a', 'b', 'c'], ARRAY['count', 'sum(a)', 'avg(b)'], 3),
    ('agg8', ARRAY['a', 'b', 'c'], ARRAY['count', 'sum(a)', 'avg(a)',
        'var_samp(b)', 'min(c)', 'max(c)', 'first(a)', 'last(b)'], 8);
CREATE FUNCTION b.mem() RETURNS bigint LANGUAGE sql AS $$
    SELECT coalesce(sum(total_bytes), 0)::bigint FROM pg_backend_memory_contexts
     WHERE name = 'streamforge pipeline' OR parent = 'streamforge pipeline' $$;
CREATE PROCEDURE b.load(p text, cname text, nwin int, tput boolean DEFAULT false) LANGUAGE plpgsql AS $$
DECLARE r record; c b.cfg;
BEGIN
    SELECT * INTO c FROM b.cfg WHERE name = cname;
    PERFORM streamforge.create_pipeline(p, ARRAY['p'],
        CASE WHEN nwin = 1 THEN ARRAY[streamforge.fixed('w', 1000000000)]
             ELSE ARRAY[streamforge.fixed('w', 1000000000), streamforge.fixed('x', 1000000000)] END,
        measures => c.measures, aggregates => c.aggregates);
    FOR r IN SELECT * FROM (SELECT batch, d FROM b.one WHERE c.measures IS NULL AND NOT tput
                            UNION ALL SELECT batch, d FROM b.one_t WHERE c.measures IS NULL AND tput) s ORDER BY batch LOOP
        PERFORM count(*) FROM streamforge.ingest_batch(p, r.d);
    END LOOP;
    FOR r IN SELECT * FROM (SELECT batch, d FROM b.multi WHERE c.measures IS NOT NULL AND NOT tput
                            UNION ALL SELECT batch, d FROM b.multi_t WHERE c.measures IS NOT NULL AND tput) s ORDER BY batch LOOP
        PERFORM count(*) FROM streamforge.ingest_measures_batch(p, r.d);
    END LOOP;
END $$;
CREATE FUNCTION b.timed(p text, cfg text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    CALL b.load(p, cfg, 1, true);
    RETURN extract(epoch FROM clock_timestamp() - t0);
END $$;
EOSQL
# state: one backend per pipeline, so that only its context is counted
for cfg in one agg1 agg3 agg8; do
	for nwin in 1 2; do
		psql_db -At -F '|' -c "SET client_min_messages = warning;
			CALL b.load('s_${cfg}_$nwin', '$cfg', $nwin);" >/dev/null
		psql_db -At -F '|' -c "SELECT '$cfg', $nwin, (SELECT naggs FROM b.cfg WHERE name = '$cfg'),
			(SELECT count(*) FROM streamforge.live('s_${cfg}_$nwin')), b.mem(),
			length(streamforge.checkpoint('s_${cfg}_$nwin'))" >>"$SCRATCH/state.txt"
		psql_db -c "SELECT streamforge.drop_pipeline('s_${cfg}_$nwin')" >/dev/null
	done
done
# throughput: interleaved repetitions, one transaction per pipeline load
for rep in $(seq 1 "$REPS"); do
	for cfg in one agg8; do
		psql_db -At -c "SET client_min_messages = warning;
			SELECT '$cfg|' || b.timed('t_$cfg', '$cfg');" >>"$SCRATCH/tput.txt"
		psql_db -c "SELECT streamforge.drop_pipeline('t_$cfg')" >/dev/null
	done
done

OUT=$BENCH/results/aggregates-$DATE-$SHA.md
{
	echo "# Declared aggregates: state and ingest_batch throughput ($DATE, $SHA)"
	echo
	echo "$EVENTS events, one live bucket each per fixed window; per-bucket figures are the difference between two fixed windows and one, per event."
	echo
	echo "| pipeline | aggregates | memory per live bucket (B) | checkpoint bytes per live bucket |"
	echo "|---|---:|---:|---:|"
	awk -F'|' -v n="$EVENTS" '
		$2 == 1 { m1[$1] = $5; c1[$1] = $6; a[$1] = $3 }
		$2 == 2 { m2[$1] = $5; c2[$1] = $6 }
		END { split("one agg1 agg3 agg8", o, " ");
			  for (i = 1; i <= 4; i++) { k = o[i];
				printf "| %s | %s | %.1f | %.1f |\n", (k == "one" ? "one measure (count, sum, min, max)" : "3 measures, " a[k] " declared"), a[k], (m2[k] - m1[k]) / n, (c2[k] - c1[k]) / n } }' "$SCRATCH/state.txt"
	echo
	echo "| ingest_batch (batches of 10,000) | best of $REPS (events/s) |"
	echo "|---|---:|"
	awk -F'|' -v n="$EVENTS" '{ if (!($1 in best) || $2 < best[$1]) best[$1] = $2 }
		END { printf "| one measure, ingest_batch | %.0f |\n", n / best["one"];
			  printf "| 3 measures, 8 aggregates, ingest_measures_batch | %.0f |\n", n / best["agg8"];
			  printf "| ratio | %.2f |\n", best["one"] / best["agg8"] }' "$SCRATCH/tput.txt"
} >"$OUT"
cat "$OUT"
