# bench/nexmark/callgrind.sh: sourced by bench/nexmark/run.sh --callgrind N.
# Instruction counts of the agg, batch and upsert ways of q17 and q11, and
# of the INSERT batches alone (the floor of agg and upsert), on the first
# N events' bids (rounded down to whole batches of 10,000), each in a
# single-user backend under callgrind started from the loaded state; the
# counters are zeroed at pg_backend_pid() before the workload and dumped at
# pg_sleep() after it (finish() included).  Then the same once more after
# one batch of warm-up (not counted; the counted batches are the next
# ones): what a backend that has already prepared its plans pays.  And
# issue 42 item 3's ratio both ways: the trigger (sf_attached_insert) per
# bid over the batch call (append_batch / append_measures_batch) per bid.
# Appends to $OUT.
as_server "$SRVBIN/pg_ctl" -D "$SCRATCH/data" -m fast -w stop >/dev/null
started=
NB=$(( CG * 46 / 50 / 10000 ))
[ "$NB" -ge 1 ] || NB=1
mkdir -p "$SCRATCH/cg"
sf_is_root && chown postgres:postgres "$SCRATCH/cg"
declare -A trig call irs
for mode in cold warm; do
{
	echo
	if [ "$mode" = cold ]; then
		echo "## Instructions (callgrind), $NB batches of 10,000 bids (the first $((NB * 10000)) bids)"
	else
		echo "## The same after one batch of warm-up (not counted): batches 2 to $((NB + 1))"
	fi
	echo
	echo "| query | way | instructions | per bid | final rows | per final row | sf_sink_emit (inclusive) | its per final row |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|"
} >>"$OUT"
for spec in "q17 agg feed_insert q17a" "q17 batch feed_batch q17b" "q17 upsert feed_upsert q17" \
	"q11 agg feed_insert q11a" "q11 batch feed_batch q11b" "q11 upsert feed_upsert q11" "- floor feed_insert plain"; do
	set -- $spec
	q=$1 w=$2 proc=$3 p=$4
	sf_say "  callgrind: $q $w ($mode)"
	rm -rf "$SCRATCH/run"
	as_server cp -a "$SCRATCH/cgdata" "$SCRATCH/run"
	f=$SCRATCH/cg/$q-$w
	[ "$mode" = warm ] && f=$SCRATCH/cg/$q-$w-warm
	if [ "$mode" = cold ]; then
		work="CALL nx.$proc('$p', $NB);"
		printf '%s\n\n' "SELECT pg_backend_pid();" "$work" >"$f.sql"
	else
		printf '%s\n\n' "CALL nx.$proc('$p', 1);" "SELECT pg_backend_pid();" \
			"CALL nx.$proc('$p', $((NB + 1)), 1);" >"$f.sql"
	fi
	case $w in
		agg | batch)
			printf '%s\n\n' "SELECT streamforge.finish('$p') IS NULL;" "SELECT pg_sleep(0);" \
				"SELECT count(*) AS final_rows_count FROM public.$p WHERE final;" >>"$f.sql" ;;
		upsert)
			# the result table's rows (no final rows: a plain upsert has no
			# notion of final; the count is its rows, for the per-row column)
			printf '%s\n\n' "SELECT pg_sleep(0);" \
				"SELECT count(*) AS final_rows_count FROM nx.${p}_up;" >>"$f.sql" ;;
		*)
			printf '%s\n\n' "SELECT pg_sleep(0);" >>"$f.sql" ;;
	esac
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
	irs[$q-$w-$mode]=$ir
	rows=$({ grep -o 'final_rows_count = "[0-9]*"' "$f.log" || true; } | tail -1 | { grep -o '[0-9][0-9]*' || true; })
	[ -n "$rows" ] || rows=0
	callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$part" >"$f.ann" 2>/dev/null || true
	# the output rows' writes (issue 42 item 1): sf_sink_emit, inclusive
	sink=$({ grep -m1 -E '[: ]sf_sink_emit( |$)' "$f.ann" || true; } | awk '{ gsub(",", "", $1); print $1 }')
	[ -n "$sink" ] || sink=0
	awk -v q="$q" -v w="$w" -v ir="$ir" -v b="$((NB * 10000))" -v r="$rows" -v s="$sink" 'BEGIN {
		printf "| %s | %s | %.0f | %.0f | %d | %s | %.0f | %s |\n", q, w, ir, ir / b, r, (r > 0 ? sprintf("%.0f", ir / r) : "-"),
			s, (r > 0 ? sprintf("%.0f", s / r) : "-") }' >>"$OUT"
	if [ "$mode" = cold ]; then
		grep -E '^ *[0-9,]+ ' "$f.ann" | sed -n 1,40p >"$f.top" || true
		cp "$part" "$SCRATCH/cg/$q-$w.callgrind"
	fi
	# item 3: the trigger, or the batch call, per bid
	if [ "$w" = agg ]; then
		trig[$q-$mode]=$(grep -m1 -E 'attach_insert\.c:sf_attached_insert ' "$f.ann" | awk -v b="$((NB * 10000))" '{ gsub(",", "", $1); printf "%.0f", $1 / b }')
	elif [ "$w" = batch ]; then
		call[$q-$mode]=$(grep -m1 -E 'write\.c:sf_append(_measures)?_batch ' "$f.ann" | awk -v b="$((NB * 10000))" '{ gsub(",", "", $1); printf "%.0f", $1 / b }')
	fi
done
done
{
	echo
	echo "Issue 42 item 3, instructions per bid: the trigger (sf_attached_insert, inclusive) / the batch call it makes (goal <= 1.3)"
	echo
	echo "| query | trigger, cold | batch call, cold | ratio | trigger, warm | batch call, warm | ratio |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for q in q17 q11; do
		awk -v q="$q" -v tc="${trig[$q-cold]:-0}" -v cc="${call[$q-cold]:-0}" -v tw="${trig[$q-warm]:-0}" -v cw="${call[$q-warm]:-0}" 'BEGIN {
			printf "| %s | %d | %d | %.2f | %d | %d | %.2f |\n", q, tc, cc, (cc > 0 ? tc / cc : 0), tw, cw, (cw > 0 ? tw / cw : 0) }'
	done
} >>"$OUT"
# issue 42 item 5 (ahead of the upsert), in instructions: each way, and
# what it adds to the INSERT batches alone
{
	echo
	echo "Issue 42 item 5 in instructions: create_aggregate fed by INSERT batches (agg) against the plain-SQL upsert, whole and above the INSERT batches alone (the floor: $(awk -v f="${irs[--floor-cold]:-0}" -v b="$((NB * 10000))" 'BEGIN { printf "%.0f", f / b }') per bid cold, $(awk -v f="${irs[--floor-warm]:-0}" -v b="$((NB * 10000))" 'BEGIN { printf "%.0f", f / b }') warm)"
	echo
	echo "| query | run | agg per bid | upsert per bid | agg / upsert | agg above the floor | upsert above the floor | ratio above the floor |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|"
	for q in q17 q11; do
		for mode in cold warm; do
			awk -v q="$q" -v m="$mode" -v a="${irs[$q-agg-$mode]:-0}" -v u="${irs[$q-upsert-$mode]:-0}" \
				-v f="${irs[--floor-$mode]:-0}" -v b="$((NB * 10000))" 'BEGIN {
				printf "| %s | %s | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f |\n", q, m, a / b, u / b, (u > 0 ? a / u : 0),
					(a - f) / b, (u - f) / b, (u > f ? (a - f) / (u - f) : 0) }'
		done
	done
} >>"$OUT"
# the floor (issue 42 item 1): q17's rows COPYed into a table like the
# table of its results (run.sh: QT, QCOLS), in a single-user backend under
# callgrind, per row
sf_say "  callgrind: q17 COPY"
rm -rf "$SCRATCH/run"
as_server cp -a "$SCRATCH/cgdata" "$SCRATCH/run"
f=$SCRATCH/cg/q17-copy
printf '%s\n\n' "CREATE TABLE nx.results_copy (LIKE $QT INCLUDING ALL);" \
	"SELECT pg_backend_pid();" "COPY nx.results_copy ($QCOLS) FROM '$SCRATCH/q17rows.copy';" \
	"SELECT pg_sleep(0);" >"$f.sql"
sf_is_root && chown postgres:postgres "$f.sql"
as_server valgrind --tool=callgrind --callgrind-out-file="$f.out" \
	--zero-before=pg_backend_pid --dump-before=pg_sleep \
	"$SRVBIN/postgres" --single -j -D "$SCRATCH/run" \
	-c fsync=off -c jit=off -c autovacuum=off "$DB" <"$f.sql" >"$f.log" 2>&1 ||
	{ tail -n 30 "$f.log"; sf_die "callgrind q17 COPY: the backend failed"; }
part=$f.out.1
[ -f "$part" ] || part=$f.out
ir=$(grep -m1 '^summary:' "$part" | awk '{ print $2 }')
rows=$(wc -l <"$SCRATCH/q17rows.copy")
awk -v ir="$ir" -v r="$rows" 'BEGIN {
	printf "\nThe floor: COPY of q17'"'"'s %d result rows into a table LIKE its own table of results INCLUDING ALL: %.0f instructions, %.0f per row.\n", r, ir, ir / r }' >>"$OUT"
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
