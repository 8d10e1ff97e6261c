# bench/nexmark/aggs.sh: sourced by bench/nexmark/run.sh (issue 44 item 7):
# Nexmark q5, q7, q15, q16 and q19, the queries of the analytics
# aggregates (top-N, max_by, count(DISTINCT) with FILTER).  Functions
# called by run.sh at its steps:
#   aggs_setup      after nexmark.sql: the tables and aggregates
#                   (nexmark_aggs.sql), the batch call's arrays
#   aggs_measure    the ways of each query, each in its own backend
#   aggs_compare    every way's rows against the plain-SQL statement's
#   aggs_report     appends the tables to $OUT
#   aggs_callgrind  with --callgrind N (after callgrind.sh): instructions of
#                   the agg way of each query on the first N events' bids
# Each query runs on the first $AGG_EVENTS events' whole batches of 10,000
# bids (q19: $Q19_EVENTS), not the whole generated stream.
AGG_QUERIES=${AGG_QUERIES:-q5 q7 q15 q16 q19}

# nb_of EVENTS: the number of whole batches of 10,000 bids in EVENTS events
nb_of() {
	local nb=$(( $1 * 46 / 50 / 10000 ))
	[ "$nb" -ge 1 ] || nb=1
	echo "$nb"
}
aggs_nb() { if [ "$1" = q19 ]; then nb_of "$Q19_EVENTS"; else nb_of "$AGG_EVENTS"; fi; }

aggs_setup() {
	[ -n "$AGG_QUERIES" ] || return 0
	sf_say "making the aggregates of q5, q7, q15, q16, q19"
	cp "$HERE/nexmark_aggs.sql" "$SCRATCH/"
	sf_is_root && chown postgres:postgres "$SCRATCH/nexmark_aggs.sql"
	psql_db -f "$SCRATCH/nexmark_aggs.sql" >/dev/null
	local q
	for q in $AGG_QUERIES; do
		psql_db -c "SELECT nx.build_batches('${q}b')" >/dev/null
	done
}

aggs_measure() {
	[ -n "$AGG_QUERIES" ] || return 0
	sf_say "measuring q5, q7, q15, q16, q19"
	local q nb prev=
	: >"$SCRATCH/aggways.txt"
	for q in $AGG_QUERIES; do
		nb=$(aggs_nb "$q")
		if [ "$nb" != "$prev" ]; then
			# the floor of the INSERT ways for this many batches
			psql_db -c "SELECT nx.bid_table('floor_$nb')" >/dev/null
			way "floor$nb floor" "CALL nx.feed_insert('floor_$nb', $nb);"
			prev=$nb
		fi
		way "$q agg" "CALL nx.feed_insert('${q}a', $nb);" --mark "SELECT streamforge.finish('${q}a') IS NULL;"
		way "$q batch" "CALL nx.feed_batch('${q}b', $nb);" --mark "SELECT streamforge.finish('${q}b') IS NULL;"
		way "$q upsert" "CALL nx.feed_upsert_aggs('$q', $nb);"
		# plain SQL's statement over the same bids (the upsert way's table)
		way "$q sql" "SELECT nx.sql_query('$q', '${q}u') AS qq \\gset" "CREATE TABLE nx.${q}_res AS :qq;"
		psql_db -At -c "SELECT '$q', $nb, max(id) + 1, count(*) FROM nx.${q}u" >>"$SCRATCH/aggevents.txt"
	done
	grep -E '^(q5|q7|q15|q16|q19|floor[0-9]+) ' "$SCRATCH/ways.txt" >"$SCRATCH/aggways.txt" || true
	cat "$SCRATCH/aggways.txt"
}

aggs_compare() {
	[ -n "$AGG_QUERIES" ] || return 0
	sf_say "comparing every way of q5, q7, q15, q16, q19 with plain SQL, row for row"
	local q w
	: >"$SCRATCH/aggcmp.txt"
	for q in $AGG_QUERIES; do
		for w in a b upsert; do
			psql_db -At -F '|' -c "SELECT '$q', '$w', (SELECT count(*) FROM nx.${q}_res),
				nx.diff(nx.rows_of('$q', 'sql'), nx.rows_of('$q', '$w')),
				nx.reference_rows('$q', '${q}u')" >>"$SCRATCH/aggcmp.txt"
		done
	done
	cat "$SCRATCH/aggcmp.txt"
	AGG_BAD=$(awk -F'|' '$4 != 0' "$SCRATCH/aggcmp.txt" | wc -l)
}

aggs_report() {
	[ -n "$AGG_QUERIES" ] || return 0
	{
		echo
		echo "## q5, q7, q15, q16, q19 (issue 44 item 7)"
		echo
		echo "Each query on the first whole batches of 10,000 bids of the same stream: \`--agg-events $AGG_EVENTS\`"
		echo "($(nb_of "$AGG_EVENTS") batches; q19: \`--q19-events $Q19_EVENTS\`, $(nb_of "$Q19_EVENTS") batches);"
		echo "events/s per core = the events up to the last bid used (Nexmark's count, persons and auctions"
		echo "included) / backend CPU. finish() is measured apart too (it emits and finalizes every open window:"
		echo "all of q15's and q16's rows, the last windows of the others). Goals: issue 44 item 7, via agg."
		echo
		echo "| query | way | events | CPU (s) | of which finish() | wall (s) | events/s per core | goal | peak RSS (MB) | final rows | rows equal to plain SQL |"
		echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
		awk -F'|' -v evf="$SCRATCH/aggevents.txt" -v cmpf="$SCRATCH/aggcmp.txt" '
			BEGIN {
				while ((getline l < evf) > 0) { split(l, f, "|"); ev[f[1]] = f[3]; nb[f[1]] = f[2]; evnb[f[2]] = f[3] }
				while ((getline l < cmpf) > 0) { split(l, f, "|"); rows[f[1]] = f[3]; d[f[1] " " f[2]] = f[4]; ref[f[1]] = f[5] }
				goal["q5"] = "150k"; goal["q7"] = "100k"; goal["q15"] = "170k"; goal["q16"] = "60k"
			}
			{ split($1, nw, " "); q = nw[1]; w = nw[2]; cpu[$1] = $2
			  if (w == "floor") { n = substr(q, 6); e = evnb[n]
				printf "| - | INSERT batches, no aggregate (floor of %d batches) | %d | %.2f | | %.2f | %.0f | | %.0f | | |\n", n, e, $2, $3, ($2 > 0 ? e / $2 : 0), $4 / 1024
				floor[n] = $2; next }
			  e = ev[q]; k = (w == "agg" ? "a" : (w == "batch" ? "b" : w))
			  eq = (w == "sql" ? "(the reference)" : ((q " " k) in d ? (d[q " " k] == 0 ? "yes" : "NO: " d[q " " k] " rows differ") : ""))
			  printf "| %s | %s | %d | %.2f | %s | %.2f | %.0f | %s | %.0f | %s | %s |\n", q, w, e, $2,
				(w == "agg" || w == "batch" ? sprintf("%.2f", $5) : ""), $3, ($2 > 0 ? e / $2 : 0),
				(w == "agg" ? goal[q] : ""), $4 / 1024, rows[q], eq }
			END {
				print ""
				print "| query | agg / sql (CPU) | agg / upsert (CPU) | agg / batch (CPU) | (agg - floor) / batch | reference rows (ties kept) | rows here |"
				print "|---|---:|---:|---:|---:|---:|---:|"
				split("q5 q7 q15 q16 q19", qs, " ")
				for (i = 1; i <= 5; i++) { q = qs[i]; if (!((q " agg") in cpu)) continue
					printf "| %s | %.2f | %.2f | %.2f | %.2f | %s | %s |\n", q, cpu[q " agg"] / cpu[q " sql"],
						cpu[q " agg"] / cpu[q " upsert"], cpu[q " agg"] / cpu[q " batch"],
						(cpu[q " agg"] - floor[nb[q]]) / cpu[q " batch"], (ref[q] == "" ? "-" : ref[q]), rows[q] }
			}' "$SCRATCH/aggways.txt"
		echo
		echo "Ways: agg = create_aggregate fed by INSERT batches of 10,000 rows, then finish(); batch = the"
		echo "trigger's batch call (append_measures_batch) on arrays built beforehand, then finish(); upsert ="
		echo "each batch INSERTed and folded into result tables in the same transaction (q15/q16: distinct sets"
		echo "by INSERT ... ON CONFLICT DO NOTHING RETURNING; q5: counts per auction and window, the top-1 read at"
		echo "the end; q19: the kept bids, pruned to 10 per auction and window); sql = the query as one statement"
		echo "over the table. Reference rows: what the reference's own form (q5: join with the window's max count,"
		echo "every tie kept; q7: join with the window's max price, dateTime BETWEEN window_end - 10 s AND"
		echo "window_end) gives on the same bids, against the rows here (bench/nexmark/README.md)."
	} >>"$OUT"
}

aggs_callgrind() {
	[ -n "$AGG_QUERIES" ] || return 0
	local nb q f part ir rows
	nb=$(nb_of "$CG")
	{
		echo
		echo "## Instructions (callgrind) of q5, q7, q15, q16, q19 via create_aggregate, $nb batches of 10,000 bids"
		echo
		echo "| query | way | instructions | per bid | final rows | per final row |"
		echo "|---|---|---:|---:|---:|---:|"
	} >>"$OUT"
	for q in $AGG_QUERIES; do
		sf_say "  callgrind: $q agg"
		rm -rf "$SCRATCH/run"
		as_server cp -a "$SCRATCH/cgdata" "$SCRATCH/run"
		f=$SCRATCH/cg/$q-agg
		printf '%s\n\n' "SELECT pg_backend_pid();" "CALL nx.feed_insert('${q}a', $nb);" \
			"SELECT streamforge.finish('${q}a') IS NULL;" "SELECT pg_sleep(0);" \
			"SELECT count(*) AS final_rows_count FROM public.${q}a WHERE final;" >"$f.sql"
		sf_is_root && chown postgres:postgres "$f.sql"
		as_server valgrind --tool=callgrind --callgrind-out-file="$f.out" \
			--zero-before=pg_backend_pid --dump-before=pg_sleep \
			"$SRVBIN/postgres" --single -j -D "$SCRATCH/run" \
			-c fsync=off -c jit=off -c autovacuum=off "$DB" <"$f.sql" >"$f.log" 2>&1 ||
			{ tail -n 30 "$f.log"; sf_die "callgrind $q agg: the backend failed"; }
		if grep -qE '(^|\] )(ERROR|FATAL|PANIC):' "$f.log"; then
			grep -E '(^|\] )(ERROR|FATAL|PANIC):' "$f.log" | head -5
			sf_die "callgrind $q agg: the workload failed ($f.log)"
		fi
		part=$f.out.1
		[ -f "$part" ] || part=$f.out
		ir=$(grep -m1 '^summary:' "$part" | awk '{ print $2 }')
		rows=$(grep -o 'final_rows_count = "[0-9]*"' "$f.log" | tail -1 | grep -o '[0-9][0-9]*')
		[ -n "$rows" ] || rows=0
		awk -v q="$q" -v ir="$ir" -v b="$((nb * 10000))" -v r="$rows" 'BEGIN {
			printf "| %s | agg | %.0f | %.0f | %d | %s |\n", q, ir, ir / b, r, (r > 0 ? sprintf("%.0f", ir / r) : "-") }' >>"$OUT"
		callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$part" >"$f.ann" 2>/dev/null || true
		grep -E '^ *[0-9,]+ ' "$f.ann" | sed -n 1,45p >"$f.itop" || true
		callgrind_annotate --inclusive=no --threshold=100 --auto=no "$part" >"$f.sann" 2>/dev/null || true
		grep -E '^ *[0-9,]+ ' "$f.sann" | sed -n 1,25p >"$f.stop" || true
		cp "$part" "$SCRATCH/cg/$q-agg.callgrind"
	done
	{
		echo
		echo "Top functions of each (callgrind_annotate: inclusive, then self):"
		for q in $AGG_QUERIES; do
			for k in itop stop; do
				echo
				echo "### $q agg, $([ $k = itop ] && echo inclusive || echo self)"
				echo
				echo '```'
				sed 's/ \/[^ ]*:/ /' "$SCRATCH/cg/$q-agg.$k" | cut -c1-160
				echo '```'
			done
		done
	} >>"$OUT"
}
