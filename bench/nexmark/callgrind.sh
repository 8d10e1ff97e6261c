# bench/nexmark/callgrind.sh: sourced by bench/nexmark/run.sh --callgrind N.
# Instruction counts of the agg and batch ways of q17 and q11 on the first
# N events' bids (rounded down to whole batches of 10,000), each in a
# single-user backend under callgrind started from the loaded state; the
# counters are zeroed at pg_backend_pid() before the workload and dumped at
# pg_sleep() after it (finish() included).  Appends to $OUT.
as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -m fast -w stop >/dev/null
started=
NB=$(( CG * 46 / 50 / 10000 ))
[ "$NB" -ge 1 ] || NB=1
mkdir -p "$SCRATCH/cg"
sf_is_root && chown postgres:postgres "$SCRATCH/cg"
{
	echo
	echo "## Instructions (callgrind), $NB batches of 10,000 bids (the first $((NB * 10000)) bids)"
	echo
	echo "| query | way | instructions | per bid | final rows | per final row |"
	echo "|---|---|---:|---:|---:|---:|"
} >>"$OUT"
for spec in "q17 agg feed_insert q17a" "q17 batch feed_batch q17b" "q11 agg feed_insert q11a" "q11 batch feed_batch q11b"; do
	set -- $spec
	q=$1 w=$2 proc=$3 p=$4
	sf_say "  callgrind: $q $w"
	rm -rf "$SCRATCH/run"
	as_server cp -a "$SCRATCH/cgdata" "$SCRATCH/run"
	f=$SCRATCH/cg/$q-$w
	printf '%s\n\n' "SELECT pg_backend_pid();" "CALL nx.$proc('$p', $NB);" \
		"SELECT streamforge.finish('$p') IS NULL;" "SELECT pg_sleep(0);" \
		"SELECT count(*) AS final_rows_count FROM public.$p WHERE final;" >"$f.sql"
	sf_is_root && chown postgres:postgres "$f.sql"
	as_server valgrind --tool=callgrind --callgrind-out-file="$f.out" \
		--zero-before=pg_backend_pid --dump-before=pg_sleep \
		"$SRVBIN/postgres" --single -j -D "$SCRATCH/run" \
		-c fsync=off -c jit=off -c autovacuum=off "$DB" <"$f.sql" >"$f.log" 2>&1 ||
		{ tail -n 30 "$f.log"; sf_die "callgrind $q $w: the backend failed"; }
	if grep -qE '(^|\] )(ERROR|FATAL|PANIC):' "$f.log"; then
		grep -E '(^|\] )(ERROR|FATAL|PANIC):' "$f.log" | head -5
		sf_die "callgrind $q $w: the workload failed ($f.log)"
	fi
	part=$f.out.1
	[ -f "$part" ] || part=$f.out
	ir=$(grep -m1 '^summary:' "$part" | awk '{ print $2 }')
	rows=$(grep -o 'final_rows_count = "[0-9]*"' "$f.log" | tail -1 | grep -o '[0-9][0-9]*')
	[ -n "$rows" ] || rows=0
	awk -v q="$q" -v w="$w" -v ir="$ir" -v b="$((NB * 10000))" -v r="$rows" 'BEGIN {
		printf "| %s | %s | %.0f | %.0f | %d | %s |\n", q, w, ir, ir / b, r, (r > 0 ? sprintf("%.0f", ir / r) : "-") }' >>"$OUT"
	callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$part" >"$f.ann" 2>/dev/null || true
	grep -E '^ *[0-9,]+ ' "$f.ann" | sed -n 1,40p >"$f.top" || true
	cp "$part" "$SCRATCH/cg/$q-$w.callgrind"
done
{
	echo
	echo "Top functions by inclusive instructions (callgrind_annotate --inclusive=yes):"
	for t in "$SCRATCH"/cg/*.top; do
		echo
		echo "### $(basename "$t" .top)"
		echo
		echo '```'
		sed 's/ \/[^ ]*:/ /' "$t" | cut -c1-160
		echo '```'
	done
} >>"$OUT"
