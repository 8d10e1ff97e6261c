#!/usr/bin/env bash
# bench/hostile.sh: what hostile checkpoints cost (issue 11, item 3).  Any
# role can call inspect_checkpoint and, with admin on a pipeline, restore;
# this measures the worst cases found, per MB of input:
#
#   bomb N      a checkpoint whose zlib payload inflates to N MB (a valid
#               envelope around spaces): inspect_checkpoint inflates it and
#               fails parsing, or refuses it unread when N MB exceeds
#               streamforge.max_checkpoint_size (default 512 MB);
#   sliding N   restore of a real checkpoint of one sliding(100000, 1)
#               window holding N events of one key (N * 100000 pairs of
#               event and bucket, about N + 100000 live rows): the
#               validation cost that was 212 s per MB in 0.1.0;
#   fixed       restore of an ordinary large state for comparison:
#               fixed(1000), 200000 events over 20000 keys.
#
#   ./bench/hostile.sh [--quick] [--keep] [--no-build]
#
# BOMBS and SLIDING (lists of sizes, empty to skip) override the full
# run's cases, e.g. to measure an older build without inflating its bombs.
#
# Like bench/run.sh it installs the build into a private copy of the
# PostgreSQL tree in a scratch directory and runs a throwaway cluster on a
# Unix socket there; it writes bench/results/hostile-<date>-<sha>.md and
# hostile-latest.md (a --quick run: *-quick.md) with one row per case:
# input bytes, seconds, seconds per MB of input, the outcome (SQLSTATE),
# and the backend's peak RSS.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGOPTIONS PGSERVICE PGSERVICEFILE
PORT=5434						# names the socket file only: no TCP listener
DB=hostile
QUICK=
KEEP=
BUILD=1
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) QUICK=1 ;;
		--keep) KEEP=1 ;;
		--no-build) BUILD= ;;
		-h | --help) sed -n '2,21p' "$0"; exit 0 ;;
		*) echo "usage: $0 [--quick] [--keep] [--no-build]" >&2; exit 2 ;;
	esac
	shift
done
if [ -n "$QUICK" ]; then
	BOMBS="16 64"
	SLIDING="100 300"
	FIXED=20000
else
	BOMBS="${BOMBS-64 256 511 600 1023}"
	SLIDING="${SLIDING-100 300 1000}"
	FIXED=200000
fi

sf_need_packages "${SF_BUILD_PACKAGES[@]}" python3
sf_check_server_user
if [ -n "$BUILD" ]; then
	make -C "$SF_ROOT" -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" >/dev/null ||
		sf_die "build failed"
fi
SHA=$(git -C "$SF_ROOT" rev-parse --short HEAD 2>/dev/null || echo nogit)
DATE=$(date -u +%Y-%m-%d)

bench_scratch hostile
sf_say "starting a throwaway cluster in $SCRATCH/data"
bench_initdb
bench_conf <<EOF
shared_buffers = 128MB
fsync = off
EOF
bench_start
as_server "$SRVBIN/createdb" -h "$SCRATCH" -p "$PORT" -U postgres "$DB"
psql_db -c "CREATE EXTENSION streamforge"

# One measured call in a fresh backend: prints seconds, SQLSTATE, peak RSS
# (kB, VmHWM of the backend).
measure() {
	local sql=$1
	psql_db -At <<EOF
\\set VERBOSITY sqlstate
CREATE TEMP TABLE t(s numeric, st text);
DO \$\$
DECLARE t0 timestamptz := clock_timestamp(); st text := '00000';
BEGIN
    BEGIN
        EXECUTE \$q\$$sql\$q\$;
    EXCEPTION WHEN OTHERS THEN st := SQLSTATE;
    END;
    INSERT INTO t VALUES (extract(epoch FROM clock_timestamp() - t0), st);
END \$\$;
SELECT round(s, 3) || ' ' || st || ' ' ||
       coalesce((SELECT regexp_replace(l, '[^0-9]', '', 'g')
                   FROM regexp_split_to_table(pg_read_file('/proc/' || pg_backend_pid() || '/status'), E'\n') l
                  WHERE l LIKE 'VmHWM%'), '?')
  FROM t;
EOF
}

OUT=$SCRATCH/hostile.md
{
	echo "# Hostile checkpoints ($DATE, $SHA)"
	echo
	echo "| case | input bytes | seconds | seconds per MB of input | SQLSTATE | backend peak RSS (MB) |"
	echo "|---|---|---|---|---|---|"
} >"$OUT"
worst=0
row() {
	local name=$1 bytes=$2 res=$3 secs st rss per
	read -r secs st rss <<<"$res"
	per=$(awk -v s="$secs" -v b="$bytes" 'BEGIN { printf "%.2f", s / (b / 1048576) }')
	echo "| $name | $bytes | $secs | $per | $st | $((rss / 1024)) |" >>"$OUT"
	worst=$(awk -v a="$worst" -v b="$per" 'BEGIN { print (b > a) ? b : a }')
	sf_say "$name: $bytes bytes, ${secs}s ($per s/MB), $st, peak RSS $((rss / 1024)) MB"
}

# Bombs: a valid envelope (magic, version 1, zlib flag, lengths, CRC-32)
# around deflated spaces, written by Python (PostgreSQL has no deflate).
for mb in $BOMBS; do
	f=$SCRATCH/bomb$mb.bin
	python3 - "$mb" "$f" <<'EOF'
import struct, sys, zlib
mb, path = int(sys.argv[1]), sys.argv[2]
n = mb * 1024 * 1024
co = zlib.compressobj(9)
chunk = b' ' * (1 << 20)
payload = b''.join(co.compress(chunk) for _ in range(mb)) + co.flush()
hdr = b'SFCKPT\r\n' + struct.pack('>HHII', 1, 1, len(payload), n)
crc = zlib.crc32(payload, zlib.crc32(hdr))
open(path, 'wb').write(hdr + struct.pack('>I', crc) + payload)
EOF
	sf_is_root && chown postgres "$f"
	bytes=$(stat -c %s "$f")
	row "bomb inflating to $mb MB (inspect_checkpoint)" "$bytes" \
		"$(measure "SELECT streamforge.inspect_checkpoint(pg_read_binary_file('$f'))")"
done

# Validation: one sliding(100000, 1) window, n events of one key
for n in $SLIDING; do
	psql_db -c "SELECT streamforge.create_pipeline('s$n', ARRAY['p'], ARRAY[streamforge.sliding('s', 100000, 1)])" \
		-c "SET streamforge.max_live_buckets = 0" \
		-c "SELECT count(*) FROM streamforge.ingest_batch('s$n', (SELECT array_agg(ROW('p', i, 'e' || i, 'k', i, i)::streamforge.delivery ORDER BY i) FROM generate_series(0, $n - 1) i))" \
		-c "CREATE TABLE cp$n AS SELECT streamforge.checkpoint('s$n') AS cp" >/dev/null
	bytes=$(psql_db -At -c "SELECT octet_length(cp) FROM cp$n")
	row "restore sliding(100000, 1), $n events of one key" "$bytes" \
		"$(measure "SELECT streamforge.restore('s$n', (SELECT cp FROM cp$n))")"
done

# A realistic large state for comparison: fixed(1000), FIXED events over
# 20000 keys, one live bucket each
psql_db -c "SELECT streamforge.create_pipeline('f', ARRAY['p'], ARRAY[streamforge.fixed('f', 1000)])" \
	-c "SELECT count(*) FROM streamforge.ingest_batch('f', (SELECT array_agg(ROW('p', i, md5(i::text), md5((i % 20000)::text), i, i)::streamforge.delivery ORDER BY i) FROM generate_series(0, $FIXED - 1) i))" \
	-c "CREATE TABLE cpf AS SELECT streamforge.checkpoint('f') AS cp" >/dev/null
bytes=$(psql_db -At -c "SELECT octet_length(cp) FROM cpf")
row "restore fixed(1000), $FIXED events of 20000 keys" "$bytes" \
	"$(measure "SELECT streamforge.restore('f', (SELECT cp FROM cpf))")"

echo >>"$OUT"
echo "Worst case: $worst seconds per MB of input." >>"$OUT"
mkdir -p "$SF_ROOT/bench/results"
suffix=${QUICK:+-quick}
cp "$OUT" "$SF_ROOT/bench/results/hostile-$DATE-$SHA$suffix.md"
cp "$OUT" "$SF_ROOT/bench/results/hostile-latest$suffix.md"
cat "$OUT"
