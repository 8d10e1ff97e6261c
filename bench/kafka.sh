#!/usr/bin/env bash
# bench/kafka.sh: messages per second through streamforge_kafka's worker
# (docs/kafka.md), next to the same messages through ingest_batch from a
# client, in one run.
#
#   ./bench/kafka.sh            500,000 messages
#   ./bench/kafka.sh --quick    100,000 messages
#
# One throwaway cluster of a private copy of the PostgreSQL tree with this
# build installed (like bench/run.sh), on a Unix socket in a scratch
# directory, with shared_preload_libraries = 'streamforge_kafka' and
# synchronous_commit = off; one mock Kafka cluster (kafka/tools/sf_kafka_mock,
# librdkafka's mock cluster, on 127.0.0.1) holding N JSON messages
# {"id":i,"k":"k<i % 1000>","t":T0+i,"v":1}, message i in partition i % P,
# P = N / 100,000 (the mock cluster keeps 100,000 messages per partition).
#   worker   a subscription (batch_size 10,000, max_wait 100 ms) consumes
#            them into a pipeline: the time from subscribe() to the last
#            offset consumed (worker start included);
#   client   the same deliveries, already parsed and built into arrays of
#            10,000 (what a hand-written consumer sends), through
#            ingest_batch by a procedure on the server, one commit per
#            batch: the floor of any client.
# Both pipelines: one fixed window of 60,000, lateness 10^9 (nothing
# closes), the same 1,000 keys.  Prints messages/s of both and the ratio,
# and writes bench/results/kafka-<date>-<sha>.md and kafka-latest.md.
#
# --workers 1,2,4 (issue 46): instead, N workers of one subscription on a
# pipeline with writers => 'parallel', for each N of the list in one run,
# side by side: messages/s from subscribe() to the last offset and the CPU
# of all the workers per message (the topic gets at least 12 partitions,
# shared by the workers: worker w reads the partitions k with k % N = w);
# --messages M sets the number of messages (with --workers; default N).
# Writes bench/results/kafka-workers-<date>-<sha>.md.
#
# Options: --keep (keep the scratch directory), --no-build.
# SF_KAFKA_PERF=1: the cluster under perf, a profile of each worker.
# SF_KAFKA_CALLGRIND=1 (with --quick): the cluster under callgrind, the
# workers' instructions per message inside their batches and dequeues
# (repeatable where the CPU times move with the machine's load).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
PORT=5443						# names the socket file only: no TCP
N=500000
KEEP=
BUILD=1
MODE=full
WORKERS=
MESSAGES=
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) N=100000; MODE=quick ;;
		--keep) KEEP=1 ;;
		--no-build) BUILD= ;;
		--workers) WORKERS=$2; shift ;;
		--messages) MESSAGES=$2; shift ;;
		-h | --help) sed -n '2,39p' "$0"; exit 0 ;;
		*) echo "usage: $0 [--quick] [--keep] [--no-build] [--workers 1,2,4 [--messages M]]" >&2; exit 2 ;;
	esac
	shift
done

sf_need_packages "${SF_BUILD_PACKAGES[@]}"
sf_check_server_user
if [ -n "$BUILD" ]; then
	make -C "$SF_ROOT" -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" >/dev/null ||
		sf_die "build failed"
fi
MOCKBIN=$SF_ROOT/kafka/tools/sf_kafka_mock
[ -x "$MOCKBIN" ] || sf_die "$MOCKBIN is missing: is librdkafka-dev installed?"
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
DATE=$(date -u +%Y-%m-%d)

SCRATCH=$(mktemp -d /tmp/streamforge-kafkabench.XXXXXX)
chmod 755 "$SCRATCH"
started=
cleanup() {
	local rc=$?
	if [ -n "${MOCK_PID:-}" ]; then
		echo quit >&"${MOCK[1]}" 2>/dev/null || true
		wait "$MOCK_PID" 2>/dev/null || true
	fi
	if [ -n "$started" ]; then
		SF_RUN_DIR=$SCRATCH sf_as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	if [ -n "$KEEP" ] || [ "$rc" -ne 0 ]; then
		echo "scratch directory kept: $SCRATCH"
	else
		rm -rf "$SCRATCH"
	fi
	exit $rc
}
trap cleanup EXIT

sf_say "installing into a private copy of the PostgreSQL tree in $SCRATCH/pg"
sf_private_tree "$SCRATCH/pg"
SRVBIN=$SCRATCH/pg$PGBIN
sf_is_root && chown -R postgres:postgres "$SCRATCH"
as_server() { SF_RUN_DIR=$SCRATCH sf_as_server "$@"; }
psql_at() { as_server "$SRVBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$SCRATCH" -p "$PORT" -U postgres -d postgres "$@"; }

as_server "$SRVBIN/initdb" -D "$SCRATCH/data" -U postgres -A trust \
	--locale=C --encoding=UTF8 >"$SCRATCH/initdb.log" 2>&1 ||
	{ cat "$SCRATCH/initdb.log"; sf_die "initdb failed"; }
as_server tee -a "$SCRATCH/data/postgresql.conf" >/dev/null <<EOF
listen_addresses = ''
port = $PORT
unix_socket_directories = '$SCRATCH'
unix_socket_permissions = 0700
shared_buffers = 512MB
work_mem = 64MB
max_wal_size = 8GB
checkpoint_timeout = 1h
autovacuum = off
synchronous_commit = off
track_commit_timestamp = on
shared_preload_libraries = 'streamforge_kafka'
streamforge_kafka.database = 'postgres'
EOF
if [ -n "${SF_KAFKA_CALLGRIND:-}" ]; then
	# the whole cluster under callgrind (forks are followed: one file per
	# process), counting only inside the worker's batch (sfk_run_batch: the
	# mapping, the write, the batch's statements, the commit) and its
	# dequeue from librdkafka (sfk_collect): the worker's main thread's
	# instructions per message, which the load does not move
	(cd "$SCRATCH" && runuser -u postgres -- valgrind --tool=callgrind --quiet \
		--collect-atstart=no --toggle-collect=sfk_run_batch --toggle-collect=sfk_collect \
		--callgrind-out-file="$SCRATCH/cg.%p" \
		"$SRVBIN/postgres" -D "$SCRATCH/data" >"$SCRATCH/server.log" 2>&1) &
	CG_PID=$!
	for _ in $(seq 1 600); do
		as_server "$SRVBIN/pg_isready" -q -h "$SCRATCH" -p "$PORT" && break
		sleep 0.2
	done
elif [ -n "${SF_KAFKA_PERF:-}" ]; then
	# the whole cluster under perf (its children inherit it): the worker's
	# profile is read by its pid at the end
	(cd "$SCRATCH" && perf record -F 499 -g -o "$SCRATCH/perf.data" -- \
		runuser -u postgres -- "$SRVBIN/postgres" -D "$SCRATCH/data" >"$SCRATCH/server.log" 2>&1) &
	PERF_PID=$!
	for _ in $(seq 1 600); do
		as_server "$SRVBIN/pg_isready" -q -h "$SCRATCH" -p "$PORT" && break
		sleep 0.2
	done
else
	as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -l "$SCRATCH/server.log" -w start >/dev/null ||
		{ tail -n 20 "$SCRATCH/server.log"; sf_die "could not start the cluster"; }
fi
started=1

if [ -n "$WORKERS" ]; then
	sf_say "starting the mock Kafka cluster"
else
	sf_say "starting the mock Kafka cluster and producing $N messages"
fi
coproc MOCK { "$MOCKBIN" 2>"$SCRATCH/mock.log"; }
read -r word BOOTSTRAP <&"${MOCK[0]}"
[ "$word" = bootstrap ] || sf_die "sf_kafka_mock did not start"
mock() {
	local answer
	echo "$*" >&"${MOCK[1]}"
	read -r answer <&"${MOCK[0]}"
	case "$answer" in ok*) ;; *) sf_die "sf_kafka_mock: $*: $answer" ;; esac
}
# --workers: N workers of one subscription on a parallel pipeline, for each
# N of the list, one after the other on the same topic, each into a
# pipeline of its own (nothing else runs meanwhile)
now() { date +%s.%N; }
run_workers() {
	local list=$1 p n wn t0 t1 c pids ticks out name rate cpu base=
	[ -n "$MESSAGES" ] && N=$MESSAGES
	p=$(( (N + 99999) / 100000 ))
	[ "$p" -lt 12 ] && p=12
	mock topic wbench "$p"
	mock gen wbench "$p" "$N" 1000 1000000
	psql_at -c "CREATE EXTENSION streamforge; CREATE EXTENSION streamforge_kafka;
	    CREATE FUNCTION bench_ticks(f text) RETURNS bigint LANGUAGE sql AS
	    \$\$SELECT split_part(c, ' ', 14)::bigint + split_part(c, ' ', 15)::bigint FROM pg_read_file(f) AS c\$\$;" >/dev/null
	name=kafka-workers-$DATE-$SHA
	out=$SF_ROOT/bench/results/$name.md
	mkdir -p "$SF_ROOT/bench/results"
	{
		echo "# streamforge_kafka: N workers per subscription ($DATE, $SHA)"
		echo
		echo "$N JSON messages in $p partitions of a mock cluster (librdkafka's, on 127.0.0.1), one"
		echo "subscription with N workers (worker w reads the partitions k with k % N = w) into a pipeline"
		echo "with writers => 'parallel', batch_size 10,000; one fixed window, 1,000 keys;"
		echo "synchronous_commit = off; $(nproc) cores shared with whatever else ran (load $(cut -d' ' -f1-3 /proc/loadavg) at"
		echo "the start). bench/kafka.sh --workers $list, one run: each N after the other, on the same topic."
		echo
		echo "Rate: messages over seconds from subscribe() (the workers' start included) to the last"
		echo "offset consumed. CPU: utime + stime of every worker process (all threads, librdkafka's"
		echo "too), read at the end, over the messages."
		echo
		echo "| workers | seconds | messages/s | rate / 1 worker's | CPU µs/message, all workers |"
		echo "|---:|---:|---:|---:|---:|"
	} >"$out"
	for wn in ${list//,/ }; do
		sf_say "workers: $wn worker(s), $N messages in $p partitions"
		psql_at -c "SELECT streamforge.create_pipeline('w$wn',
		    ARRAY(SELECT 'wbench-' || k FROM generate_series(0, $p - 1) AS k),
		    ARRAY[streamforge.fixed('w', 60000)], lateness => 1000000000, writers => 'parallel')" >/dev/null
		t0=$(now)
		psql_at -c "SELECT streamforge_kafka.subscribe('w$wn', '$BOOTSTRAP', 'wbench',
		    mapping => '{\"event_id\": \"id\", \"key\": \"k\", \"event_time\": \"t\", \"value\": \"v\"}',
		    batch_size => 10000, max_wait => 100, workers => $wn)" >/dev/null
		for _ in $(seq 1 36000); do
			c=$(psql_at -c "SELECT COALESCE(sum(consumed_offset + 1), 0) FROM streamforge.partitions('w$wn')")
			[ "$c" -ge "$N" ] && break
			sleep 0.1
		done
		t1=$(now)
		[ "$c" -ge "$N" ] || sf_die "w$wn: $c of $N messages consumed"
		# the CPU of every worker of the subscription, read while they run
		ticks=$(psql_at -c "SELECT COALESCE(sum(bench_ticks('/proc/' || a.pid || '/stat')), 0)
		    FROM pg_stat_activity AS a WHERE a.backend_type = 'streamforge_kafka worker'
		     AND a.application_name ~ ('^streamforge_kafka worker ' ||
		         (SELECT s.id FROM streamforge_kafka.subscription AS s WHERE s.pipeline = 'w$wn') || '(\.[0-9]+)?\$')")
		psql_at -c "SELECT streamforge_kafka.unsubscribe('w$wn', 'wbench')" >/dev/null
		rate=$(awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN { print n / (b - a) }')
		[ -z "$base" ] && base=$rate
		cpu=$(awk -v t="$ticks" -v n="$N" -v k="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / k * 1000000 / n }')
		printf '| %d | %.2f | %.0f | %.2f | %s |\n' "$wn" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
			"$rate" "$(awk -v a="$rate" -v b="$base" 'BEGIN { print a / b }')" "$cpu" >>"$out"
	done
	same=$(psql_at -c "SELECT count(DISTINCT x) FROM (SELECT p.n, (SELECT string_agg(l::text, ',' ORDER BY l::text)
	    FROM streamforge.live('w' || p.n) AS l) AS x FROM unnest(string_to_array('$list', ',')) AS p(n)) AS q")
	[ "$same" = 1 ] || sf_die "the pipelines of the worker counts differ"
	{
		echo
		echo "The pipelines' live buckets are checked equal across the worker counts."
	} >>"$out"
	echo
	cat "$out"
}

if [ -n "$WORKERS" ]; then
	run_workers "$WORKERS"
	exit 0
fi

P=$(( (N + 99999) / 100000 ))
mock topic bench "$P"
mock gen bench "$P" "$N" 1000 1000000

psql_at <<EOF
CREATE EXTENSION streamforge;
CREATE EXTENSION streamforge_kafka;
SELECT streamforge.create_pipeline('via_worker',
    ARRAY(SELECT 'bench-' || p FROM generate_series(0, $P - 1) AS p),
    ARRAY[streamforge.fixed('w', 60000)], lateness => 1000000000);
SELECT streamforge.create_pipeline('via_client',
    ARRAY(SELECT 'bench-' || p FROM generate_series(0, $P - 1) AS p),
    ARRAY[streamforge.fixed('w', 60000)], lateness => 1000000000);
-- the same deliveries as the messages, in arrays of 10,000
CREATE TABLE batches AS
SELECT i / 10000 AS b,
       array_agg(ROW('bench-' || (i % $P), i / $P, i::text, 'k' || (i % 1000), 1000000 + i, 1)::streamforge.delivery
                 ORDER BY i) AS d
  FROM generate_series(0, $N - 1) AS i GROUP BY 1;
-- CPU ticks (utime + stime) of a /proc stat file, read once
CREATE FUNCTION bench_ticks(f text) RETURNS bigint LANGUAGE sql AS
    \$\$SELECT split_part(c, ' ', 14)::bigint + split_part(c, ' ', 15)::bigint FROM pg_read_file(f) AS c\$\$;
-- Waits until pipeline p has consumed n offsets; res: the commit times
-- (epoch) of its first batch seen and of its last, the offsets consumed at
-- the first, the worker's pid, its CPU ticks (main thread, all threads) at
-- both, its main thread's nanoseconds on a CPU and waiting for one
-- (schedstat) in between, the seconds from the first seen to the last
-- commit, and this backend's CPU ticks.  It watches the pipeline's row,
-- whose version each writing transaction bumps, and reads the consumed
-- offsets (streamforge.partitions, which replays the new batches into this
-- backend's copy of the state: as much CPU as the ingest itself) only once
-- no batch has come for 200 ms: a poll of the offsets every 5 ms took 0.7-0.9
-- µs of CPU per message from the worker's 2 cores, which the client's run
-- does not have beside it.  The times are the batches' commit timestamps
-- (track_commit_timestamp), not when the poll saw them.
CREATE PROCEDURE bench_wait(p text, n bigint, INOUT res text DEFAULT NULL) LANGUAGE plpgsql AS \$\$
DECLARE
    c bigint; pid integer; tf float8; t1 float8; first bigint;
    m0 bigint; a0 bigint; m1 bigint; a1 bigint; s0 text; s1 text; b0 bigint; b1 bigint;
    v bigint; v2 bigint; last bigint; still integer := 0; w0 float8;
BEGIN
    LOOP
        SELECT l.version, extract(epoch FROM pg_xact_commit_timestamp(l.xmin)) INTO v, tf
          FROM streamforge.pipeline AS l WHERE l.name = p;
        SELECT COALESCE(sum(consumed_offset + 1), 0), max(worker_pid) INTO c, pid
          FROM streamforge_kafka.subscriptions WHERE pipeline = p;
        SELECT l.version INTO v2 FROM streamforge.pipeline AS l WHERE l.name = p;
        EXIT WHEN c > 0 AND v = v2;
        COMMIT;
        PERFORM pg_sleep(0.002);
    END LOOP;
    first := c;
    last := v;
    w0 := extract(epoch FROM clock_timestamp());
    m0 := bench_ticks('/proc/' || pid || '/task/' || pid || '/stat');
    a0 := bench_ticks('/proc/' || pid || '/stat');
    s0 := pg_read_file('/proc/' || pid || '/task/' || pid || '/schedstat');
    b0 := bench_ticks('/proc/' || pg_backend_pid() || '/stat');
    LOOP
        COMMIT;
        SELECT l.version, extract(epoch FROM pg_xact_commit_timestamp(l.xmin)) INTO v, t1
          FROM streamforge.pipeline AS l WHERE l.name = p;
        IF v <> last THEN
            last := v;
            still := 0;
        ELSE
            still := still + 1;
        END IF;
        IF still = 40 THEN
            m1 := bench_ticks('/proc/' || pid || '/task/' || pid || '/stat');
            a1 := bench_ticks('/proc/' || pid || '/stat');
            s1 := pg_read_file('/proc/' || pid || '/task/' || pid || '/schedstat');
            b1 := bench_ticks('/proc/' || pg_backend_pid() || '/stat');
            SELECT COALESCE(sum(consumed_offset + 1), 0) INTO c
              FROM streamforge_kafka.subscriptions WHERE pipeline = p;
            EXIT WHEN c >= n;
        END IF;
        PERFORM pg_sleep(0.005);
    END LOOP;
    res := concat_ws(' ', tf, t1, first, pid, m0, a0, m1, a1,
                     split_part(s1, ' ', 1)::bigint - split_part(s0, ' ', 1)::bigint,
                     split_part(s1, ' ', 2)::bigint - split_part(s0, ' ', 2)::bigint,
                     t1 - w0, b1 - b0);
END
\$\$;
CREATE PROCEDURE run_client() LANGUAGE plpgsql AS \$\$
DECLARE r record;
BEGIN
    FOR r IN SELECT d FROM batches ORDER BY b LOOP
        PERFORM count(*) FROM streamforge.ingest_batch('via_client', r.d);
        COMMIT;
    END LOOP;
END
\$\$;
CHECKPOINT;
EOF

now() { date +%s.%N; }
# CPU seconds of a process's main thread (the backend: mapping, SQL,
# ingest) and of all its threads (librdkafka's fetch threads too)
main_cpu() { awk -v t="$(getconf CLK_TCK)" '{ print ($14 + $15) / t }' "/proc/$1/task/$1/stat"; }
all_cpu() { awk -v t="$(getconf CLK_TCK)" '{ print ($14 + $15) / t }' "/proc/$1/stat"; }
# CPU ticks of the mock cluster (its brokers serve the fetches on these same cores)
mock_ticks() {
	local s=0 p
	for p in $(pgrep -x sf_kafka_mock); do
		s=$((s + $(awk '{ print $14 + $15 }' "/proc/$p/stat")))
	done
	echo "$s"
}

sf_say "worker: subscribe and wait for the $N messages ($P partitions)"
mk0=$(mock_ticks)
t0=$(now)
psql_at -c "SELECT streamforge_kafka.subscribe('via_worker', '$BOOTSTRAP', 'bench',
    mapping => '{\"event_id\": \"id\", \"key\": \"k\", \"event_time\": \"t\", \"value\": \"v\"}',
    batch_size => 10000, max_wait => 100)" >/dev/null
read -r tf t1 first spid m0 a0 m1 a1 srun swait swall spoll <<<"$(psql_at -c "CALL bench_wait('via_worker', $N)")"
# where the main thread's steady time went: on a CPU, waiting for one (run
# queue: the cores busy with other threads), off (waiting for librdkafka,
# the WAL, a lock); and the waiting backend's own CPU per message
ssched=$(awk -v r="$srun" -v w="$swait" -v s="$swall" -v p="$spoll" -v n="$N" -v f="$first" -v t="$(getconf CLK_TCK)" \
	'BEGIN { d = s * 1e9; if (d > 0 && n > f) printf "%.0f%% on a CPU, %.0f%% waiting for one, %.0f%% off; the waiting backend %.2f µs/message", 100 * r / d, 100 * w / d, 100 * (d - r - w) / d, p / t * 1e6 / (n - f); else print "-" }')
smock_us=$(awk -v a="$mk0" -v b="$(mock_ticks)" -v n="$N" -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (b - a) / t * 1000000 / n }')
steady_rate=$(awk -v n="$N" -v f="$first" -v a="$tf" -v b="$t1" 'BEGIN { if (b > a) print (n - f) / (b - a); else print 0 }')
worker_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
spid=$(psql_at -c "SELECT worker_pid FROM streamforge_kafka.subscriptions WHERE pipeline = 'via_worker' LIMIT 1")
# each thread of the worker since its start: CPU seconds and minor page faults
threads() {
	local t
	for t in /proc/"$1"/task/*; do
		awk -v c="$(cat "$t/comm")" -v k="$(getconf CLK_TCK)" '{ printf "%s (nice %d) %.2f s %d faults; ", c, $19, ($14 + $15) / k, $10 }' "$t/stat"
	done
	awk '$1 == "VmHWM:" { printf "peak resident memory %d MB", $2 / 1024 }' "/proc/$1/status"
}
sthreads=$(threads "$spid")
smain_us=$(awk -v c="$(main_cpu "$spid")" -v n="$N" 'BEGIN { print c * 1000000 / n }')
# from the first committed batch on: the worker's start and its first batch left out
ssteady=$(awk -v a="$a1" -v a0="$a0" -v m="$m1" -v m0="$m0" -v n="$N" -v f="$first" -v t="$(getconf CLK_TCK)" \
	'BEGIN { if (n > f) printf "%.1f (%.1f)", (a - a0) / t * 1000000 / (n - f), (m - m0) / t * 1000000 / (n - f); else print "-" }')
scpu_us=$(awk -v t="$(getconf CLK_TCK)" -v n="$N" '{ print ($14 + $15) / t * 1000000 / n }' "/proc/$spid/stat")

sf_say "client: ingest_batch of the same deliveries"
t0=$(now)
ccpu_us=$(psql_at -v n="$N" -v tck="$(getconf CLK_TCK)" <<'EOF2' | tail -n 1
SELECT pg_backend_pid() AS pid \gset
SELECT split_part(pg_read_file('/proc/' || :pid || '/stat'), ' ', 14)::bigint
     + split_part(pg_read_file('/proc/' || :pid || '/stat'), ' ', 15)::bigint AS c0 \gset
CALL run_client();
SELECT ((split_part(pg_read_file('/proc/' || :pid || '/stat'), ' ', 14)::bigint
       + split_part(pg_read_file('/proc/' || :pid || '/stat'), ' ', 15)::bigint - :c0)
        * 1000000.0 / :tck / :n)::numeric(10,1);
EOF2
)
t1=$(now)
client_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')

same=$(psql_at -c "SELECT (SELECT array_agg(l ORDER BY l::text) FROM streamforge.live('via_worker') AS l)::text
                       = (SELECT array_agg(l ORDER BY l::text) FROM streamforge.live('via_client') AS l)::text")
[ "$same" = t ] || sf_die "the two pipelines differ"

# The clickstream job (issue 43): a query-defined aggregate (WHERE, a
# composite key, a nullable measure) fed by a topic of JSON messages with
# ISO timestamps and 6 fields through subscribe_aggregate, next to the
# same rows INSERTed into its table in statements of 10,000 (the
# attachment's path, one commit per statement).  The worker's CPU time
# (utime + stime of its process) per message is measured too.
sf_say "clickstream: producing $N messages"
psql_at <<EOF
CREATE TABLE clicks_w (id bigint PRIMARY KEY, page text NOT NULL, country text NOT NULL,
    status text NOT NULL, ms integer, clicked_at timestamptz NOT NULL);
CREATE TABLE clicks_c (LIKE clicks_w INCLUDING ALL);
CREATE TABLE clicks_b (LIKE clicks_w INCLUDING ALL);
SELECT streamforge.create_aggregate('click_w', \$\$
    SELECT page, country, count(*) AS n, sum(ms) AS total, avg(ms) AS mean
      FROM clicks_w WHERE status <> 'bot'
     GROUP BY page, country, streamforge.tumble(clicked_at, interval '1 minute')
\$\$, lateness => interval '1000 days');
SELECT streamforge.create_aggregate('click_c', \$\$
    SELECT page, country, count(*) AS n, sum(ms) AS total, avg(ms) AS mean
      FROM clicks_c WHERE status <> 'bot'
     GROUP BY page, country, streamforge.tumble(clicked_at, interval '1 minute')
\$\$, lateness => interval '1000 days');
SELECT streamforge.create_aggregate('click_b', \$\$
    SELECT page, country, count(*) AS n, sum(ms) AS total, avg(ms) AS mean
      FROM clicks_b WHERE status <> 'bot'
     GROUP BY page, country, streamforge.tumble(clicked_at, interval '1 minute')
\$\$, lateness => interval '1000 days');
CREATE TABLE click_src AS
SELECT i AS id, '/p' || (i % 50) AS page, (ARRAY['fr', 'de', 'us', 'uk'])[i % 4 + 1] AS country,
       CASE WHEN i % 10 = 3 AND i < $N - 1000 THEN 'bot' ELSE 'ok' END AS status,
       CASE WHEN i % 97 = 0 THEN NULL ELSE i % 900 END AS ms,
       timestamptz '2026-12-01 00:00:00+00' + i * interval '10 milliseconds' AS clicked_at
  FROM generate_series(0, $N - 1) AS i;
-- the same events as deliveries built ahead (the attachment's own
-- expressions over the rows), in arrays of 10,000: ingest_measures_batch
DO \$\$
DECLARE a text[];
BEGIN
    SELECT string_to_array(encode(t.tgargs, 'escape'), '\\000') INTO a
      FROM pg_trigger AS t
     WHERE t.tgrelid = 'clicks_b'::regclass
       AND t.tgname = streamforge_internal.attach_trigger_name('click_b');
    EXECUTE format('CREATE TABLE click_batches AS SELECT i / 10000 AS b, '
                   'array_agg(ROW(%s, i, %s, %s, %s, %s)::streamforge.measures_delivery ORDER BY i) AS d '
                   'FROM (SELECT new_rows.*, row_number() OVER (ORDER BY id) - 1 AS i '
                   'FROM click_src AS new_rows WHERE %s) AS new_rows GROUP BY 1',
                   a[2], a[3], a[4], a[5], a[6], COALESCE(NULLIF(a[10], ''), 'true'));
END
\$\$;
CREATE PROCEDURE run_click_batches() LANGUAGE plpgsql AS \$\$
DECLARE r record;
BEGIN
    FOR r IN SELECT d FROM click_batches ORDER BY b LOOP
        PERFORM count(*) FROM streamforge.ingest_measures_batch('click_b', r.d);
        COMMIT;
    END LOOP;
END
\$\$;
CREATE PROCEDURE run_clicks() LANGUAGE plpgsql AS \$\$
BEGIN
    FOR b IN 0 .. ($N - 1) / 10000 LOOP
        INSERT INTO clicks_c SELECT * FROM click_src
         WHERE id >= b * 10000 AND id < (b + 1) * 10000 ORDER BY id;
        COMMIT;
    END LOOP;
END
\$\$;
EOF
# the mock cluster keeps a partition's last bytes only: the clickstream's
# larger messages take one partition per 20,000
PC=$(( (N + 19999) / 20000 ))
mock topic clicks "$PC"
psql_at -c "SELECT format('p clicks %s %s - %s', id % $PC,
        (extract(epoch FROM clicked_at) * 1000)::bigint,
        json_build_object('id', id, 'page', page, 'country', country, 'status', status,
                          'ms', ms, 'at', to_char(clicked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')))
  FROM click_src ORDER BY id" >&"${MOCK[1]}"
mock flush
psql_at -c "CHECKPOINT"

sf_say "clickstream worker: subscribe_aggregate and wait for the $N messages"
mk0=$(mock_ticks)
t0=$(now)
psql_at -c "SELECT streamforge_kafka.subscribe_aggregate('click_w', '$BOOTSTRAP', 'clicks',
    '{\"id\": \"id\", \"page\": \"page\", \"country\": \"country\", \"status\": \"status\", \"ms\": \"ms\", \"clicked_at\": \"at\"}',
    batch_size => 10000, max_wait => 100)" >/dev/null
# (no partition ends with a bot's message, which would stay pending: the
# last 1,000 are no bots')
read -r tf t1 first wpid cmain0 ccpu0 cm1 ca1 crun cwait cwall cpoll <<<"$(psql_at -c "CALL bench_wait('click_w', $N)")"
csched=$(awk -v r="$crun" -v w="$cwait" -v s="$cwall" -v p="$cpoll" -v n="$N" -v f="$first" -v t="$(getconf CLK_TCK)" \
	'BEGIN { d = s * 1e9; if (d > 0 && n > f) printf "%.0f%% on a CPU, %.0f%% waiting for one, %.0f%% off; the waiting backend %.2f µs/message", 100 * r / d, 100 * w / d, 100 * (d - r - w) / d, p / t * 1e6 / (n - f); else print "-" }')
cmock_us=$(awk -v a="$mk0" -v b="$(mock_ticks)" -v n="$N" -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (b - a) / t * 1000000 / n }')
csteady_rate=$(awk -v n="$N" -v f="$first" -v a="$tf" -v b="$t1" 'BEGIN { if (b > a) print (n - f) / (b - a); else print 0 }')
cworker_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
wpid=$(psql_at -c "SELECT worker_pid FROM streamforge_kafka.subscriptions WHERE pipeline = 'click_w' LIMIT 1")
cthreads=$(threads "$wpid")
cmain_us=$(awk -v c="$(main_cpu "$wpid")" -v n="$N" 'BEGIN { print c * 1000000 / n }')
csteady=$(awk -v a="$ca1" -v a0="$ccpu0" -v m="$cm1" -v m0="$cmain0" -v n="$N" -v f="$first" -v t="$(getconf CLK_TCK)" \
	'BEGIN { if (n > f) printf "%.1f (%.1f)", (a - a0) / t * 1000000 / (n - f), (m - m0) / t * 1000000 / (n - f); else print "-" }')
tck=$(getconf CLK_TCK)
cpu_s=$(awk -v t="$tck" '{ print ($14 + $15) / t }' "/proc/$wpid/stat")

# CPU of a procedure's backend per message
proc_cpu() {
	psql_at -v n="$N" -v tck="$(getconf CLK_TCK)" -v proc="$1" <<'EOF2' | tail -n 1
SELECT pg_backend_pid() AS pid \gset
SELECT split_part(pg_read_file('/proc/' || :pid || '/stat'), ' ', 14)::bigint
     + split_part(pg_read_file('/proc/' || :pid || '/stat'), ' ', 15)::bigint AS c0 \gset
CALL :proc();
SELECT ((split_part(pg_read_file('/proc/' || :pid || '/stat'), ' ', 14)::bigint
       + split_part(pg_read_file('/proc/' || :pid || '/stat'), ' ', 15)::bigint - :c0)
        * 1000000.0 / :tck / :n)::numeric(10,1);
EOF2
}
sf_say "clickstream client: ingest_measures_batch of the same events"
t0=$(now)
cbcpu_us=$(proc_cpu run_click_batches)
t1=$(now)
cbatch_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')

sf_say "clickstream client: INSERT of the same rows into the aggregate's table"
t0=$(now)
cccpu_us=$(proc_cpu run_clicks)
t1=$(now)
cclient_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
same=$(psql_at -c "SELECT (SELECT string_agg(format('%s|%s|%s|%s|%s|%s', page, country, window_start, n, total, mean), ',' ORDER BY page, country, window_start) FROM click_w_live)
                       = (SELECT string_agg(format('%s|%s|%s|%s|%s|%s', page, country, window_start, n, total, mean), ',' ORDER BY page, country, window_start) FROM click_c_live)")
[ "$same" = t ] || sf_die "the two clickstream aggregates differ"
same=$(psql_at -c "SELECT (SELECT string_agg(format('%s|%s|%s|%s|%s|%s', page, country, window_start, n, total, mean), ',' ORDER BY page, country, window_start) FROM click_w_live)
                       = (SELECT string_agg(format('%s|%s|%s|%s|%s|%s', page, country, window_start, n, total, mean), ',' ORDER BY page, country, window_start) FROM click_b_live)")
[ "$same" = t ] || sf_die "the worker's clickstream aggregate and ingest_measures_batch's differ"
cbatch_rate=$(awk -v n="$N" -v s="$cbatch_s" 'BEGIN { print n / s }')
cworker_rate=$(awk -v n="$N" -v s="$cworker_s" 'BEGIN { print n / s }')
cclient_rate=$(awk -v n="$N" -v s="$cclient_s" 'BEGIN { print n / s }')
cratio=$(awk -v a="$cworker_rate" -v b="$cclient_rate" 'BEGIN { print a / b }')
cbratio=$(awk -v a="$cworker_rate" -v b="$cbatch_rate" 'BEGIN { print a / b }')
csratio=$(awk -v a="$csteady_rate" -v b="$cbatch_rate" 'BEGIN { print a / b }')
cpu_us=$(awk -v c="$cpu_s" -v n="$N" 'BEGIN { print c * 1000000 / n }')

worker_rate=$(awk -v n="$N" -v s="$worker_s" 'BEGIN { print n / s }')
client_rate=$(awk -v n="$N" -v s="$client_s" 'BEGIN { print n / s }')
ratio=$(awk -v a="$worker_rate" -v b="$client_rate" 'BEGIN { print a / b }')
sratio=$(awk -v a="$steady_rate" -v b="$client_rate" 'BEGIN { print a / b }')

mkdir -p "$SF_ROOT/bench/results"
name=kafka-$DATE-$SHA
[ "$MODE" = quick ] && name=$name-quick
[ -n "${SF_KAFKA_CALLGRIND:-}" ] && name=$name-callgrind
if [ -n "${SF_KAFKA_PERF:-}" ]; then
	as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -m fast -w stop >/dev/null 2>&1 || true
	started=
	wait "$PERF_PID" 2>/dev/null || true
	for w in "simple:$spid" "clickstream:$wpid"; do
		perf report -i "$SCRATCH/perf.data" --pid="${w#*:}" --stdio --no-children -g none \
			--percent-limit 0.7 --sort dso,symbol 2>/dev/null | grep -E '^ +[0-9]' |
			head -n 45 >"$SF_ROOT/bench/results/$name-perf-${w%%:*}.txt" || true
	done
fi
if [ -n "${SF_KAFKA_CALLGRIND:-}" ]; then
	as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -m fast -w stop >/dev/null 2>&1 || true
	started=
	wait "$CG_PID" 2>/dev/null || true
	# instructions per message of each worker's main thread, and of the
	# core's write inside it (sf_direct_ingest_v1, inclusive)
	for w in "simple:$spid" "clickstream:$wpid"; do
		f=$(ls "$SCRATCH/cg.${w#*:}"* 2>/dev/null | head -n 1)
		[ -n "$f" ] || continue
		callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null |
			awk -v w="${w%%:*}" -v n="$N" '
				/PROGRAM TOTALS/ { gsub(",", "", $1); tot = $1 }
				/sf_direct_ingest_v1/ && !wr { gsub(",", "", $1); wr = $1 }
				/sfk_json_scan/ && !js { gsub(",", "", $1); js = $1 }
				END { printf "callgrind %s: %.0f instructions/message in the batches and the dequeue, the write %.0f, the JSON scan %.0f, all but the write %.0f\n", w, tot / n, wr / n, js / n, (tot - wr) / n }' |
			tee -a "$SCRATCH/callgrind.txt"
	done
fi
out=$SF_ROOT/bench/results/$name.md
{
	echo "# streamforge_kafka: messages/s, worker vs client ($DATE, $SHA)"
	echo
	echo "$N JSON messages in $P partitions of a mock cluster (librdkafka's, on 127.0.0.1), one worker,"
	echo "batch_size 10,000; one fixed window, 1,000 keys; synchronous_commit = off;"
	echo "$(nproc) cores shared with whatever else ran. bench/kafka.sh, one run."
	echo
	echo "Rates: messages over seconds from subscribe() (worker start included) and, in"
	echo "parentheses, from the first committed batch to the last (the worker's steady rate)."
	echo "CPU: the worker process's utime + stime (/proc) from its start, all threads (librdkafka's"
	echo "fetch threads too) and, in parentheses, its main thread alone (mapping, SQL, ingest); or the"
	echo "client backend's during its procedure; divided by the messages. On an idle machine the"
	echo "main thread's CPU bounds the worker's rate, librdkafka's threads running on another core."
	echo
	echo "| path | seconds | messages/s | rate / ingest_batch's | CPU µs/message | CPU µs/message after the first batch |"
	echo "|---|---:|---:|---:|---:|---:|"
	printf '| worker: Kafka -> JSON mapping -> ingest_batch, one commit per batch | %.2f | %.0f (%.0f) | %.2f (%.2f) | %s | %s |\n' "$worker_s" "$worker_rate" "$steady_rate" "$ratio" "$sratio" "$scpu_us ($smain_us)" "$ssteady"
	printf '| client: pre-built delivery arrays -> ingest_batch, one commit per batch | %.2f | %.0f | 1.00 | %s | %s |\n' "$client_s" "$client_rate" "$ccpu_us" "$ccpu_us"
	echo
	echo "The mock cluster's own CPU while the worker consumed (its brokers serve the fetches on the"
	echo "same $(nproc) cores as the worker's threads): $smock_us µs per message. The worker's main"
	echo "thread from the first committed batch to the last: $ssched. Its threads"
	echo "from its start (CPU, minor page faults): $sthreads"
	echo
	echo "Clickstream (issue 43): a create_aggregate job (WHERE, key page + country, count, sum and"
	echo "avg of a nullable integer, 1-minute tumble) fed by $N JSON messages of 6 fields with ISO"
	echo "timestamps through subscribe_aggregate, next to the same events as measures deliveries"
	echo "built ahead by the attachment's own expressions through ingest_measures_batch by 10,000,"
	echo "and the same rows INSERTed into the aggregate's table by 10,000 (its attachment); one"
	echo "commit per batch or statement. The three aggregates' views are checked equal."
	echo
	echo "| path | seconds | messages/s | rate / ingest_measures_batch's | CPU µs/message | CPU µs/message after the first batch |"
	echo "|---|---:|---:|---:|---:|---:|"
	printf '| worker: Kafka -> subscribe_aggregate rows in C -> ingest_measures_batch | %.2f | %.0f (%.0f) | %.2f (%.2f) | %s | %s |\n' "$cworker_s" "$cworker_rate" "$csteady_rate" "$cbratio" "$csratio" "$cpu_us ($cmain_us)" "$csteady"
	printf '| client: pre-built measures delivery arrays -> ingest_measures_batch | %.2f | %.0f | 1.00 | %s | %s |\n' "$cbatch_s" "$cbatch_rate" "$cbcpu_us" "$cbcpu_us"
	printf '| client: INSERT into the aggregate'"'"'s table by 10,000 | %.2f | %.0f | %.2f | %s | %s |\n' "$cclient_s" "$cclient_rate" "$(awk -v a="$cclient_rate" -v b="$cbatch_rate" 'BEGIN { print a / b }')" "$cccpu_us" "$cccpu_us"
	echo
	echo "The mock cluster's own CPU while the clickstream worker consumed: $cmock_us µs per message."
	echo "The worker's main thread from the first committed batch to the last: $csched."
	echo "Its threads from its start (CPU, minor page faults): $cthreads"
	if [ -s "$SCRATCH/callgrind.txt" ]; then
		echo
		echo "Under callgrind (SF_KAFKA_CALLGRIND: every process under valgrind, so the rates and CPU"
		echo "above are not the worker's; counted inside sfk_run_batch and sfk_collect only):"
		echo
		sed 's/^/    /' "$SCRATCH/callgrind.txt"
	fi
} >"$out"
[ "$MODE" = full ] && cp "$out" "$SF_ROOT/bench/results/kafka-latest.md"
echo
cat "$out"
